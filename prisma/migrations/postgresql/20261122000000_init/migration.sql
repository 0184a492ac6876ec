-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "type" INTEGER NOT NULL DEFAULT 0,
    "name" TEXT NOT NULL,
    "lowerName" TEXT NOT NULL,
    "fullName" TEXT NOT NULL DEFAULT '',
    "email" TEXT NOT NULL DEFAULT '',
    "keepEmailPrivate" BOOLEAN NOT NULL DEFAULT false,
    "passwordHash" TEXT NOT NULL DEFAULT '',
    "mustChangePassword" BOOLEAN NOT NULL DEFAULT false,
    "loginName" TEXT NOT NULL DEFAULT '',
    "loginSource" INTEGER NOT NULL DEFAULT 0,
    "location" TEXT NOT NULL DEFAULT '',
    "website" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "language" TEXT NOT NULL DEFAULT '',
    "avatarUrl" TEXT NOT NULL DEFAULT '',
    "visibility" INTEGER NOT NULL DEFAULT 0,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "isAdmin" BOOLEAN NOT NULL DEFAULT false,
    "isRestricted" BOOLEAN NOT NULL DEFAULT false,
    "prohibitLogin" BOOLEAN NOT NULL DEFAULT false,
    "allowGitHook" BOOLEAN NOT NULL DEFAULT false,
    "allowImportLocal" BOOLEAN NOT NULL DEFAULT false,
    "allowCreateOrganization" BOOLEAN NOT NULL DEFAULT true,
    "maxRepoCreation" INTEGER NOT NULL DEFAULT -1,
    "repoAdminChangeTeamAccess" BOOLEAN NOT NULL DEFAULT false,
    "totpSecret" TEXT,
    "totpLastUsed" INTEGER,
    "numFollowers" INTEGER NOT NULL DEFAULT 0,
    "numFollowing" INTEGER NOT NULL DEFAULT 0,
    "numStars" INTEGER NOT NULL DEFAULT 0,
    "numRepos" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "lastLoginAt" TIMESTAMP(3),

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserRedirect" (
    "id" SERIAL NOT NULL,
    "lowerName" TEXT NOT NULL,
    "redirectUserId" INTEGER NOT NULL,

    CONSTRAINT "UserRedirect_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EmailAddress" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "lowerEmail" TEXT NOT NULL,
    "isActivated" BOOLEAN NOT NULL DEFAULT true,
    "isPrimary" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "EmailAddress_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AccessToken" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "tokenSalt" TEXT NOT NULL,
    "tokenLastEight" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),

    CONSTRAINT "AccessToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OrgUser" (
    "id" SERIAL NOT NULL,
    "orgId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "isPublic" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "OrgUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Team" (
    "id" SERIAL NOT NULL,
    "orgId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "lowerName" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "authorize" INTEGER NOT NULL DEFAULT 1,
    "includesAllRepositories" BOOLEAN NOT NULL DEFAULT false,
    "canCreateOrgRepo" BOOLEAN NOT NULL DEFAULT false,
    "numRepos" INTEGER NOT NULL DEFAULT 0,
    "numMembers" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TeamUser" (
    "id" SERIAL NOT NULL,
    "orgId" INTEGER NOT NULL,
    "teamId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,

    CONSTRAINT "TeamUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TeamRepo" (
    "id" SERIAL NOT NULL,
    "orgId" INTEGER NOT NULL,
    "teamId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,

    CONSTRAINT "TeamRepo_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TeamUnit" (
    "id" SERIAL NOT NULL,
    "orgId" INTEGER NOT NULL,
    "teamId" INTEGER NOT NULL,
    "unitType" TEXT NOT NULL,
    "accessMode" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "TeamUnit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Repository" (
    "id" SERIAL NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "ownerName" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "lowerName" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "website" TEXT NOT NULL DEFAULT '',
    "originalUrl" TEXT NOT NULL DEFAULT '',
    "defaultBranch" TEXT NOT NULL DEFAULT 'main',
    "isPrivate" BOOLEAN NOT NULL DEFAULT false,
    "isEmpty" BOOLEAN NOT NULL DEFAULT true,
    "isArchived" BOOLEAN NOT NULL DEFAULT false,
    "isMirror" BOOLEAN NOT NULL DEFAULT false,
    "isFork" BOOLEAN NOT NULL DEFAULT false,
    "forkId" INTEGER,
    "isTemplate" BOOLEAN NOT NULL DEFAULT false,
    "trustModel" TEXT NOT NULL DEFAULT 'default',
    "objectFormatName" TEXT NOT NULL DEFAULT 'sha1',
    "size" INTEGER NOT NULL DEFAULT 0,
    "numWatches" INTEGER NOT NULL DEFAULT 0,
    "numStars" INTEGER NOT NULL DEFAULT 0,
    "numForks" INTEGER NOT NULL DEFAULT 0,
    "numIssues" INTEGER NOT NULL DEFAULT 0,
    "numClosedIssues" INTEGER NOT NULL DEFAULT 0,
    "numPulls" INTEGER NOT NULL DEFAULT 0,
    "numClosedPulls" INTEGER NOT NULL DEFAULT 0,
    "numMilestones" INTEGER NOT NULL DEFAULT 0,
    "numClosedMilestones" INTEGER NOT NULL DEFAULT 0,
    "numReleases" INTEGER NOT NULL DEFAULT 0,
    "nextIssueIndex" INTEGER NOT NULL DEFAULT 1,
    "hasIssues" BOOLEAN NOT NULL DEFAULT true,
    "hasWiki" BOOLEAN NOT NULL DEFAULT true,
    "hasPullRequests" BOOLEAN NOT NULL DEFAULT true,
    "hasProjects" BOOLEAN NOT NULL DEFAULT true,
    "hasReleases" BOOLEAN NOT NULL DEFAULT true,
    "hasPackages" BOOLEAN NOT NULL DEFAULT true,
    "hasActions" BOOLEAN NOT NULL DEFAULT false,
    "enableDependencies" BOOLEAN NOT NULL DEFAULT true,
    "archivedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Repository_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Collaboration" (
    "id" SERIAL NOT NULL,
    "repoId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "mode" INTEGER NOT NULL DEFAULT 2,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Collaboration_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PublicKey" (
    "id" SERIAL NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "keyType" TEXT NOT NULL DEFAULT 'user',
    "mode" INTEGER NOT NULL DEFAULT 2,
    "kind" TEXT NOT NULL DEFAULT 'user',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PublicKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Label" (
    "id" SERIAL NOT NULL,
    "repoId" INTEGER,
    "orgId" INTEGER,
    "name" TEXT NOT NULL,
    "exclusive" BOOLEAN NOT NULL DEFAULT false,
    "description" TEXT NOT NULL DEFAULT '',
    "color" TEXT NOT NULL,
    "numIssues" INTEGER NOT NULL DEFAULT 0,
    "numClosedIssues" INTEGER NOT NULL DEFAULT 0,
    "archivedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Label_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CronTask" (
    "name" TEXT NOT NULL,
    "schedule" TEXT NOT NULL,
    "execTimes" INTEGER NOT NULL DEFAULT 0,
    "prevAt" TIMESTAMP(3),
    "nextAt" TIMESTAMP(3),

    CONSTRAINT "CronTask_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_lowerName_key" ON "User"("lowerName");

-- CreateIndex
CREATE INDEX "User_type_lowerName_idx" ON "User"("type", "lowerName");

-- CreateIndex
CREATE UNIQUE INDEX "UserRedirect_lowerName_key" ON "UserRedirect"("lowerName");

-- CreateIndex
CREATE UNIQUE INDEX "EmailAddress_lowerEmail_key" ON "EmailAddress"("lowerEmail");

-- CreateIndex
CREATE INDEX "EmailAddress_userId_idx" ON "EmailAddress"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "AccessToken_tokenHash_key" ON "AccessToken"("tokenHash");

-- CreateIndex
CREATE INDEX "AccessToken_tokenLastEight_idx" ON "AccessToken"("tokenLastEight");

-- CreateIndex
CREATE UNIQUE INDEX "AccessToken_userId_name_key" ON "AccessToken"("userId", "name");

-- CreateIndex
CREATE INDEX "OrgUser_userId_idx" ON "OrgUser"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "OrgUser_orgId_userId_key" ON "OrgUser"("orgId", "userId");

-- CreateIndex
CREATE UNIQUE INDEX "Team_orgId_lowerName_key" ON "Team"("orgId", "lowerName");

-- CreateIndex
CREATE INDEX "TeamUser_userId_idx" ON "TeamUser"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "TeamUser_teamId_userId_key" ON "TeamUser"("teamId", "userId");

-- CreateIndex
CREATE INDEX "TeamRepo_repoId_idx" ON "TeamRepo"("repoId");

-- CreateIndex
CREATE UNIQUE INDEX "TeamRepo_teamId_repoId_key" ON "TeamRepo"("teamId", "repoId");

-- CreateIndex
CREATE UNIQUE INDEX "TeamUnit_teamId_unitType_key" ON "TeamUnit"("teamId", "unitType");

-- CreateIndex
CREATE INDEX "Repository_lowerName_idx" ON "Repository"("lowerName");

-- CreateIndex
CREATE INDEX "Repository_isPrivate_lowerName_idx" ON "Repository"("isPrivate", "lowerName");

-- CreateIndex
CREATE INDEX "Repository_updatedAt_idx" ON "Repository"("updatedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Repository_ownerId_lowerName_key" ON "Repository"("ownerId", "lowerName");

-- CreateIndex
CREATE INDEX "Collaboration_userId_idx" ON "Collaboration"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "Collaboration_repoId_userId_key" ON "Collaboration"("repoId", "userId");

-- CreateIndex
CREATE INDEX "PublicKey_ownerId_idx" ON "PublicKey"("ownerId");

-- CreateIndex
CREATE UNIQUE INDEX "PublicKey_fingerprint_key" ON "PublicKey"("fingerprint");

-- CreateIndex
CREATE INDEX "Label_repoId_idx" ON "Label"("repoId");

-- CreateIndex
CREATE INDEX "Label_orgId_idx" ON "Label"("orgId");

-- AddForeignKey
ALTER TABLE "UserRedirect" ADD CONSTRAINT "UserRedirect_redirectUserId_fkey" FOREIGN KEY ("redirectUserId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EmailAddress" ADD CONSTRAINT "EmailAddress_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AccessToken" ADD CONSTRAINT "AccessToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgUser" ADD CONSTRAINT "OrgUser_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrgUser" ADD CONSTRAINT "OrgUser_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Team" ADD CONSTRAINT "Team_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamUser" ADD CONSTRAINT "TeamUser_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamUser" ADD CONSTRAINT "TeamUser_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamRepo" ADD CONSTRAINT "TeamRepo_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamRepo" ADD CONSTRAINT "TeamRepo_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamUnit" ADD CONSTRAINT "TeamUnit_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Repository" ADD CONSTRAINT "Repository_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Collaboration" ADD CONSTRAINT "Collaboration_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Collaboration" ADD CONSTRAINT "Collaboration_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PublicKey" ADD CONSTRAINT "PublicKey_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Label" ADD CONSTRAINT "Label_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

