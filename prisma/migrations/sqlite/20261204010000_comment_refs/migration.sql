-- A pull request's change of target branch on its timeline names the base before and after
-- (Gitea's comment.old_ref / new_ref).
ALTER TABLE "Comment" ADD COLUMN "oldRef" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Comment" ADD COLUMN "newRef" TEXT NOT NULL DEFAULT '';
