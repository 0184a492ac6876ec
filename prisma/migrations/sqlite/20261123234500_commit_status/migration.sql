-- Commit statuses (Gitea's commit_status), numbered per repository and commit.
CREATE TABLE "CommitStatus" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "index" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "sha" TEXT NOT NULL,
    "targetUrl" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "context" TEXT NOT NULL DEFAULT '',
    "contextHash" TEXT NOT NULL,
    "creatorId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "CommitStatus_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "CommitStatus_repoId_sha_index_key" ON "CommitStatus"("repoId", "sha", "index");
CREATE INDEX "CommitStatus_repoId_sha_contextHash_idx" ON "CommitStatus"("repoId", "sha", "contextHash");
