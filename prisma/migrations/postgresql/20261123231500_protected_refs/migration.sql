-- Branch protection rules and tag protections (ids and counters BIGINT, as Gitea's int64).
CREATE TABLE "ProtectedBranch" (
    "id" BIGSERIAL NOT NULL,
    "repoId" BIGINT NOT NULL,
    "ruleName" TEXT NOT NULL,
    "priority" BIGINT NOT NULL DEFAULT 0,
    "settings" TEXT NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ProtectedBranch_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "ProtectedBranch_repoId_ruleName_key" ON "ProtectedBranch"("repoId", "ruleName");
ALTER TABLE "ProtectedBranch" ADD CONSTRAINT "ProtectedBranch_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "ProtectedTag" (
    "id" BIGSERIAL NOT NULL,
    "repoId" BIGINT NOT NULL,
    "namePattern" TEXT NOT NULL,
    "allowlistUserIds" TEXT NOT NULL DEFAULT '[]',
    "allowlistTeamIds" TEXT NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ProtectedTag_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "ProtectedTag_repoId_idx" ON "ProtectedTag"("repoId");
ALTER TABLE "ProtectedTag" ADD CONSTRAINT "ProtectedTag_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
