-- Cross-references on the issue timeline (issue_ref, comment_ref, pull_ref, commit_ref): the
-- issue and comment that mention an issue, the keyword's action, and a mentioning commit
-- (Gitea's comment.ref_repo_id, ref_issue_id, ref_comment_id, ref_action, ref_is_pull, commit_sha).
ALTER TABLE "Comment" ADD COLUMN "refRepoId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "refIssueId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "refCommentId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "refAction" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Comment" ADD COLUMN "refIsPull" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Comment" ADD COLUMN "commitSha" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE INDEX "Comment_refIssueId_refCommentId_idx" ON "Comment"("refIssueId", "refCommentId");
