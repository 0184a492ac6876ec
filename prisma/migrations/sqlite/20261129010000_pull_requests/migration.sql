-- CreateTable
CREATE TABLE "PullRequest" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "issueId" INTEGER NOT NULL,
    "index" INTEGER NOT NULL,
    "baseRepoId" INTEGER NOT NULL,
    "baseBranch" TEXT NOT NULL,
    "headRepoId" INTEGER,
    "headBranch" TEXT NOT NULL,
    "flow" INTEGER NOT NULL DEFAULT 0,
    "status" INTEGER NOT NULL DEFAULT 1,
    "headCommitId" TEXT NOT NULL DEFAULT '',
    "mergeBase" TEXT NOT NULL DEFAULT '',
    "conflictedFiles" TEXT NOT NULL DEFAULT '[]',
    "commitsAhead" INTEGER NOT NULL DEFAULT 0,
    "commitsBehind" INTEGER NOT NULL DEFAULT 0,
    "additions" INTEGER,
    "deletions" INTEGER,
    "changedFiles" INTEGER,
    "allowMaintainerEdit" BOOLEAN NOT NULL DEFAULT false,
    "hasMerged" BOOLEAN NOT NULL DEFAULT false,
    "mergedAt" DATETIME,
    "mergedCommitId" TEXT NOT NULL DEFAULT '',
    "mergerId" INTEGER,
    CONSTRAINT "PullRequest_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "PullRequest_issueId_key" ON "PullRequest"("issueId");

-- CreateIndex
CREATE INDEX "PullRequest_baseRepoId_baseBranch_idx" ON "PullRequest"("baseRepoId", "baseBranch");

-- CreateIndex
CREATE INDEX "PullRequest_headRepoId_headBranch_idx" ON "PullRequest"("headRepoId", "headBranch");

