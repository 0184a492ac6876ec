-- Users' OpenPGP keys (Gitea's gpg_key and gpg_key_import, the armored text kept on the primary key's row).
CREATE TABLE "GpgKey" (
    "id" BIGSERIAL NOT NULL,
    "ownerId" BIGINT NOT NULL,
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
    "createdAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3),
    "addedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "GpgKey_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "GpgKey_ownerId_primaryKeyId_idx" ON "GpgKey"("ownerId", "primaryKeyId");
CREATE INDEX "GpgKey_keyId_idx" ON "GpgKey"("keyId");
CREATE INDEX "GpgKey_primaryKeyId_idx" ON "GpgKey"("primaryKeyId");
ALTER TABLE "GpgKey" ADD CONSTRAINT "GpgKey_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
