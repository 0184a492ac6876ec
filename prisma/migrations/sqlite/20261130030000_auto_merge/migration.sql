-- Pull requests scheduled to merge when their required commit statuses succeed (Gitea's auto_merge).
-- CreateTable
CREATE TABLE "AutoMerge" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "pullId" INTEGER NOT NULL,
    "doerId" INTEGER NOT NULL,
    "mergeStyle" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "deleteBranchAfterMerge" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "AutoMerge_pullId_key" ON "AutoMerge"("pullId");

