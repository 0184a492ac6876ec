-- Repository settings (units, pull request settings, avatar, mirror, transfer status), deploy keys, push mirrors, pending transfers.
ALTER TABLE "Repository" ADD COLUMN "allowFastForwardOnly" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowManualMerge" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Repository" ADD COLUMN "allowMerge" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowMergeUpdate" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowOnlyContributorsToTrackTime" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowRebase" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowRebaseExplicit" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowRebaseUpdate" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "allowSquash" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "autodetectManualMerge" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Repository" ADD COLUMN "avatar" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "defaultAllowMaintainerEdit" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "defaultDeleteBranchAfterMerge" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Repository" ADD COLUMN "defaultMergeStyle" TEXT NOT NULL DEFAULT 'merge';
ALTER TABLE "Repository" ADD COLUMN "defaultUpdateStyle" TEXT NOT NULL DEFAULT 'merge';
ALTER TABLE "Repository" ADD COLUMN "enableTimeTracker" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "externalTrackerFormat" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "externalTrackerRegexp" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "externalTrackerStyle" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "externalTrackerUrl" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "externalWikiUrl" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "hasCode" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "ignoreWhitespaceConflicts" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Repository" ADD COLUMN "mirrorEnablePrune" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "Repository" ADD COLUMN "mirrorInterval" TEXT NOT NULL DEFAULT '';
ALTER TABLE "Repository" ADD COLUMN "mirrorLastSyncAt" DATETIME;
ALTER TABLE "Repository" ADD COLUMN "mirrorUpdatedAt" DATETIME;
ALTER TABLE "Repository" ADD COLUMN "projectsMode" TEXT NOT NULL DEFAULT 'all';
ALTER TABLE "Repository" ADD COLUMN "status" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Repository" ADD COLUMN "templateId" INTEGER;
ALTER TABLE "Repository" ADD COLUMN "useExternalTracker" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "Repository" ADD COLUMN "useExternalWiki" BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE "DeployKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "keyId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "mode" INTEGER NOT NULL DEFAULT 1,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "DeployKey_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE "PushMirror" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "repoId" INTEGER NOT NULL,
    "remoteName" TEXT NOT NULL,
    "remoteAddress" TEXT NOT NULL,
    "syncOnCommit" BOOLEAN NOT NULL DEFAULT true,
    "intervalSec" INTEGER NOT NULL DEFAULT 28800,
    "lastUpdate" DATETIME,
    "lastError" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PushMirror_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE "RepoTransfer" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "doerId" INTEGER NOT NULL,
    "recipientId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "teamIds" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "RepoTransfer_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "DeployKey_repoId_idx" ON "DeployKey"("repoId");
CREATE UNIQUE INDEX "DeployKey_keyId_repoId_key" ON "DeployKey"("keyId", "repoId");
CREATE UNIQUE INDEX "PushMirror_repoId_remoteName_key" ON "PushMirror"("repoId", "remoteName");
CREATE UNIQUE INDEX "RepoTransfer_repoId_key" ON "RepoTransfer"("repoId");
