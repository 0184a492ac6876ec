-- Pull requests scheduled to merge when their required commit statuses succeed (Gitea's auto_merge).
CREATE TABLE "AutoMerge" (
    "id" BIGSERIAL NOT NULL,
    "pullId" BIGINT NOT NULL,
    "doerId" BIGINT NOT NULL,
    "mergeStyle" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "deleteBranchAfterMerge" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AutoMerge_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "AutoMerge_pullId_key" ON "AutoMerge"("pullId");
