-- Assignee and title events of the issue timeline (Gitea's comment.assignee_id, removed_assignee, old_title, new_title).
ALTER TABLE "Comment" ADD COLUMN "assigneeId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "removedAssignee" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Comment" ADD COLUMN "oldTitle" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Comment" ADD COLUMN "newTitle" TEXT NOT NULL DEFAULT '';
