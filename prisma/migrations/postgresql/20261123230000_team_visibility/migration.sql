-- Gitea 1.27 team visibility (0 public, 1 limited, 2 private; new teams are private). Owner
-- teams stay listable by every member of their organization: limited.
ALTER TABLE "Team" ADD COLUMN "visibility" BIGINT NOT NULL DEFAULT 2;
UPDATE "Team" SET "visibility" = 1 WHERE "lowerName" = 'owners' AND "authorize" = 4;
