-- Counters added after the int64 change are BIGINT too (see 20261123200000_bigint_ids).
ALTER TABLE "Repository" ALTER COLUMN "numBranches" SET DATA TYPE BIGINT;
ALTER TABLE "Issue" ALTER COLUMN "contentVersion" SET DATA TYPE BIGINT;
