-- Commit statuses (Gitea's commit_status), numbered per repository and commit; int64 columns.
CREATE TABLE "CommitStatus" (
    "id" BIGSERIAL NOT NULL,
    "index" BIGINT NOT NULL,
    "repoId" BIGINT NOT NULL,
    "state" TEXT NOT NULL,
    "sha" TEXT NOT NULL,
    "targetUrl" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "context" TEXT NOT NULL DEFAULT '',
    "contextHash" TEXT NOT NULL,
    "creatorId" BIGINT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "CommitStatus_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "CommitStatus_repoId_sha_index_key" ON "CommitStatus"("repoId", "sha", "index");
CREATE INDEX "CommitStatus_repoId_sha_contextHash_idx" ON "CommitStatus"("repoId", "sha", "contextHash");
ALTER TABLE "CommitStatus" ADD CONSTRAINT "CommitStatus_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
