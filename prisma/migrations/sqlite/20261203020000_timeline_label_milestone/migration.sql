-- Label and milestone events on the issue timeline name the label and the milestones they
-- concern (Gitea's comment.label_id, old_milestone_id, milestone_id).
ALTER TABLE "Comment" ADD COLUMN "labelId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "milestoneId" INTEGER;
ALTER TABLE "Comment" ADD COLUMN "oldMilestoneId" INTEGER;
