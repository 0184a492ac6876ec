-- CreateTable
CREATE TABLE "Review" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "type" INTEGER NOT NULL,
    "reviewerId" INTEGER NOT NULL DEFAULT 0,
    "reviewerTeamId" INTEGER NOT NULL DEFAULT 0,
    "issueId" INTEGER NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "official" BOOLEAN NOT NULL DEFAULT false,
    "commitId" TEXT NOT NULL DEFAULT '',
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "dismissed" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Review_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "ReviewComment" (
    "commentId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "reviewId" INTEGER NOT NULL DEFAULT 0,
    "treePath" TEXT NOT NULL DEFAULT '',
    "line" INTEGER NOT NULL DEFAULT 0,
    "commitSha" TEXT NOT NULL DEFAULT '',
    "patch" TEXT NOT NULL DEFAULT '',
    "resolveDoerId" INTEGER,
    "assigneeId" INTEGER,
    "assigneeTeamId" INTEGER,
    "removedAssignee" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "ReviewComment_commentId_fkey" FOREIGN KEY ("commentId") REFERENCES "Comment" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Review_issueId_reviewerId_idx" ON "Review"("issueId", "reviewerId");

-- CreateIndex
CREATE INDEX "ReviewComment_reviewId_idx" ON "ReviewComment"("reviewId");

