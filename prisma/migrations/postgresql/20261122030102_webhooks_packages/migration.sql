-- CreateTable
CREATE TABLE "Webhook" (
    "id" SERIAL NOT NULL,
    "repoId" INTEGER,
    "ownerId" INTEGER,
    "isSystem" BOOLEAN NOT NULL DEFAULT false,
    "type" TEXT NOT NULL DEFAULT 'gitea',
    "url" TEXT NOT NULL,
    "contentType" TEXT NOT NULL DEFAULT 'json',
    "httpMethod" TEXT NOT NULL DEFAULT 'POST',
    "secret" TEXT NOT NULL DEFAULT '',
    "events" TEXT NOT NULL DEFAULT '["push"]',
    "meta" TEXT NOT NULL DEFAULT '{}',
    "branchFilter" TEXT NOT NULL DEFAULT '',
    "authorizationHeader" TEXT NOT NULL DEFAULT '',
    "active" BOOLEAN NOT NULL DEFAULT false,
    "lastStatus" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "HookTask" (
    "id" SERIAL NOT NULL,
    "hookId" INTEGER NOT NULL,
    "uuid" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "isDelivered" BOOLEAN NOT NULL DEFAULT false,
    "isSucceed" BOOLEAN NOT NULL DEFAULT false,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),
    "deliveredAt" TIMESTAMP(3),
    "lastError" TEXT NOT NULL DEFAULT '',
    "responseStatus" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "HookTask_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Package" (
    "id" SERIAL NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "repoId" INTEGER,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "lowerName" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Package_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PackageVersion" (
    "id" SERIAL NOT NULL,
    "packageId" INTEGER NOT NULL,
    "creatorId" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "lowerVersion" TEXT NOT NULL,
    "downloadCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PackageVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PackageFile" (
    "id" SERIAL NOT NULL,
    "versionId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "lowerName" TEXT NOT NULL,
    "size" BIGINT NOT NULL,
    "hashMd5" TEXT NOT NULL,
    "hashSha1" TEXT NOT NULL,
    "hashSha256" TEXT NOT NULL,
    "hashSha512" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PackageFile_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Webhook_repoId_idx" ON "Webhook"("repoId");

-- CreateIndex
CREATE INDEX "Webhook_ownerId_idx" ON "Webhook"("ownerId");

-- CreateIndex
CREATE UNIQUE INDEX "HookTask_uuid_key" ON "HookTask"("uuid");

-- CreateIndex
CREATE INDEX "HookTask_isDelivered_nextAttemptAt_idx" ON "HookTask"("isDelivered", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "HookTask_hookId_idx" ON "HookTask"("hookId");

-- CreateIndex
CREATE UNIQUE INDEX "Package_ownerId_type_lowerName_key" ON "Package"("ownerId", "type", "lowerName");

-- CreateIndex
CREATE INDEX "PackageVersion_creatorId_idx" ON "PackageVersion"("creatorId");

-- CreateIndex
CREATE UNIQUE INDEX "PackageVersion_packageId_lowerVersion_key" ON "PackageVersion"("packageId", "lowerVersion");

-- CreateIndex
CREATE INDEX "PackageFile_hashSha256_idx" ON "PackageFile"("hashSha256");

-- CreateIndex
CREATE UNIQUE INDEX "PackageFile_versionId_lowerName_key" ON "PackageFile"("versionId", "lowerName");

-- AddForeignKey
ALTER TABLE "Webhook" ADD CONSTRAINT "Webhook_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Webhook" ADD CONSTRAINT "Webhook_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "HookTask" ADD CONSTRAINT "HookTask_hookId_fkey" FOREIGN KEY ("hookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Package" ADD CONSTRAINT "Package_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PackageVersion" ADD CONSTRAINT "PackageVersion_packageId_fkey" FOREIGN KEY ("packageId") REFERENCES "Package"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PackageFile" ADD CONSTRAINT "PackageFile_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PackageVersion"("id") ON DELETE CASCADE ON UPDATE CASCADE;

