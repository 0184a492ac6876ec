-- Repository settings (units, pull request settings, avatar, mirror, transfer status), deploy keys, push mirrors, pending transfers. Ids and counters BIGINT.
-- AlterTable
ALTER TABLE "Repository" ADD COLUMN     "allowFastForwardOnly" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowManualMerge" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "allowMerge" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowMergeUpdate" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowOnlyContributorsToTrackTime" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowRebase" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowRebaseExplicit" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowRebaseUpdate" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "allowSquash" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "autodetectManualMerge" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "avatar" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "defaultAllowMaintainerEdit" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "defaultDeleteBranchAfterMerge" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "defaultMergeStyle" TEXT NOT NULL DEFAULT 'merge',
ADD COLUMN     "defaultUpdateStyle" TEXT NOT NULL DEFAULT 'merge',
ADD COLUMN     "enableTimeTracker" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "externalTrackerFormat" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "externalTrackerRegexp" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "externalTrackerStyle" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "externalTrackerUrl" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "externalWikiUrl" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "hasCode" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "ignoreWhitespaceConflicts" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "mirrorEnablePrune" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "mirrorInterval" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "mirrorLastSyncAt" TIMESTAMP(3),
ADD COLUMN     "mirrorUpdatedAt" TIMESTAMP(3),
ADD COLUMN     "projectsMode" TEXT NOT NULL DEFAULT 'all',
ADD COLUMN     "status" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "templateId" BIGINT,
ADD COLUMN     "useExternalTracker" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "useExternalWiki" BOOLEAN NOT NULL DEFAULT false;
-- CreateTable
CREATE TABLE "DeployKey" (
    "id" BIGSERIAL NOT NULL,
    "keyId" BIGINT NOT NULL,
    "repoId" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "mode" BIGINT NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "DeployKey_pkey" PRIMARY KEY ("id")
);
-- CreateTable
CREATE TABLE "PushMirror" (
    "id" BIGSERIAL NOT NULL,
    "repoId" BIGINT NOT NULL,
    "remoteName" TEXT NOT NULL,
    "remoteAddress" TEXT NOT NULL,
    "syncOnCommit" BOOLEAN NOT NULL DEFAULT true,
    "intervalSec" BIGINT NOT NULL DEFAULT 28800,
    "lastUpdate" TIMESTAMP(3),
    "lastError" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PushMirror_pkey" PRIMARY KEY ("id")
);
-- CreateTable
CREATE TABLE "RepoTransfer" (
    "id" BIGSERIAL NOT NULL,
    "doerId" BIGINT NOT NULL,
    "recipientId" BIGINT NOT NULL,
    "repoId" BIGINT NOT NULL,
    "teamIds" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "RepoTransfer_pkey" PRIMARY KEY ("id")
);
-- CreateIndex
CREATE INDEX "DeployKey_repoId_idx" ON "DeployKey"("repoId");
-- CreateIndex
CREATE UNIQUE INDEX "DeployKey_keyId_repoId_key" ON "DeployKey"("keyId", "repoId");
-- CreateIndex
CREATE UNIQUE INDEX "PushMirror_repoId_remoteName_key" ON "PushMirror"("repoId", "remoteName");
-- CreateIndex
CREATE UNIQUE INDEX "RepoTransfer_repoId_key" ON "RepoTransfer"("repoId");
-- AddForeignKey
ALTER TABLE "DeployKey" ADD CONSTRAINT "DeployKey_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- AddForeignKey
ALTER TABLE "PushMirror" ADD CONSTRAINT "PushMirror_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- AddForeignKey
ALTER TABLE "RepoTransfer" ADD CONSTRAINT "RepoTransfer_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
