-- Gitea 1.27 fields: Repository branch_count and licenses, Issue content_version.
ALTER TABLE "Repository" ADD COLUMN "numBranches" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Repository" ADD COLUMN "licenses" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Issue" ADD COLUMN "contentVersion" INTEGER NOT NULL DEFAULT 0;
