-- Gitea 1.27 repository fields: branch_count and licenses.
ALTER TABLE "Repository" ADD COLUMN "numBranches" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Repository" ADD COLUMN "licenses" TEXT NOT NULL DEFAULT '';
