-- CreateTable
CREATE TABLE "Review" (
    "id" BIGSERIAL NOT NULL,
    "type" BIGINT NOT NULL,
    "reviewerId" BIGINT NOT NULL DEFAULT 0,
    "reviewerTeamId" BIGINT NOT NULL DEFAULT 0,
    "issueId" BIGINT NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "official" BOOLEAN NOT NULL DEFAULT false,
    "commitId" TEXT NOT NULL DEFAULT '',
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "dismissed" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Review_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ReviewComment" (
    "commentId" BIGINT NOT NULL,
    "reviewId" BIGINT NOT NULL DEFAULT 0,
    "treePath" TEXT NOT NULL DEFAULT '',
    "line" BIGINT NOT NULL DEFAULT 0,
    "commitSha" TEXT NOT NULL DEFAULT '',
    "patch" TEXT NOT NULL DEFAULT '',
    "resolveDoerId" BIGINT,
    "assigneeId" BIGINT,
    "assigneeTeamId" BIGINT,
    "removedAssignee" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "ReviewComment_pkey" PRIMARY KEY ("commentId")
);

-- CreateIndex
CREATE INDEX "Review_issueId_reviewerId_idx" ON "Review"("issueId", "reviewerId");

-- CreateIndex
CREATE INDEX "ReviewComment_reviewId_idx" ON "ReviewComment"("reviewId");

-- AddForeignKey
ALTER TABLE "Review" ADD CONSTRAINT "Review_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReviewComment" ADD CONSTRAINT "ReviewComment_commentId_fkey" FOREIGN KEY ("commentId") REFERENCES "Comment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

