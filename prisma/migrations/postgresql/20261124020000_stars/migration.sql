-- Stars (Gitea's star table): one row per user and starred repository; int64 columns.
CREATE TABLE "Star" (
    "id" BIGSERIAL NOT NULL,
    "userId" BIGINT NOT NULL,
    "repoId" BIGINT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Star_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Star_repoId_idx" ON "Star"("repoId");
CREATE INDEX "Star_createdAt_idx" ON "Star"("createdAt");
CREATE UNIQUE INDEX "Star_userId_repoId_key" ON "Star"("userId", "repoId");
ALTER TABLE "Star" ADD CONSTRAINT "Star_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Star" ADD CONSTRAINT "Star_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
