-- Users' OpenPGP keys (Gitea's gpg_key and gpg_key_import, the armored text kept on the primary key's row).
-- CreateTable
CREATE TABLE "GpgKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "ownerId" INTEGER NOT NULL,
    "keyId" TEXT NOT NULL,
    "primaryKeyId" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "armored" TEXT NOT NULL DEFAULT '',
    "emails" TEXT NOT NULL DEFAULT '[]',
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "canSign" BOOLEAN NOT NULL DEFAULT false,
    "canEncryptComms" BOOLEAN NOT NULL DEFAULT false,
    "canEncryptStorage" BOOLEAN NOT NULL DEFAULT false,
    "canCertify" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL,
    "expiresAt" DATETIME,
    "addedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "GpgKey_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- CreateIndex
CREATE INDEX "GpgKey_ownerId_primaryKeyId_idx" ON "GpgKey"("ownerId", "primaryKeyId");
-- CreateIndex
CREATE INDEX "GpgKey_keyId_idx" ON "GpgKey"("keyId");
-- CreateIndex
CREATE INDEX "GpgKey_primaryKeyId_idx" ON "GpgKey"("primaryKeyId");
