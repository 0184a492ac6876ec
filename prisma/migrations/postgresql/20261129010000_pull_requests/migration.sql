-- CreateTable
CREATE TABLE "PullRequest" (
    "id" BIGSERIAL NOT NULL,
    "issueId" BIGINT NOT NULL,
    "index" BIGINT NOT NULL,
    "baseRepoId" BIGINT NOT NULL,
    "baseBranch" TEXT NOT NULL,
    "headRepoId" BIGINT,
    "headBranch" TEXT NOT NULL,
    "flow" BIGINT NOT NULL DEFAULT 0,
    "status" BIGINT NOT NULL DEFAULT 1,
    "headCommitId" TEXT NOT NULL DEFAULT '',
    "mergeBase" TEXT NOT NULL DEFAULT '',
    "conflictedFiles" TEXT NOT NULL DEFAULT '[]',
    "commitsAhead" BIGINT NOT NULL DEFAULT 0,
    "commitsBehind" BIGINT NOT NULL DEFAULT 0,
    "additions" BIGINT,
    "deletions" BIGINT,
    "changedFiles" BIGINT,
    "allowMaintainerEdit" BOOLEAN NOT NULL DEFAULT false,
    "hasMerged" BOOLEAN NOT NULL DEFAULT false,
    "mergedAt" TIMESTAMP(3),
    "mergedCommitId" TEXT NOT NULL DEFAULT '',
    "mergerId" BIGINT,

    CONSTRAINT "PullRequest_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "PullRequest_issueId_key" ON "PullRequest"("issueId");
CREATE INDEX "PullRequest_baseRepoId_baseBranch_idx" ON "PullRequest"("baseRepoId", "baseBranch");
CREATE INDEX "PullRequest_headRepoId_headBranch_idx" ON "PullRequest"("headRepoId", "headBranch");
ALTER TABLE "PullRequest" ADD CONSTRAINT "PullRequest_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
