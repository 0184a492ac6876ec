-- When the update_mirrors task next fetches a pull mirror (Gitea's mirror.next_update_unix).
-- Mirrors made before this column are due at the next run.
ALTER TABLE "Repository" ADD COLUMN "mirrorNextUpdateAt" TIMESTAMP(3);
UPDATE "Repository" SET "mirrorNextUpdateAt" = "mirrorUpdatedAt" WHERE "isMirror" = true AND "mirrorInterval" NOT IN ('', '0s');
