-- OAuth2 applications (Gitea's oauth2_application) and the OAuth2/OpenID provider's stored records and key.

-- CreateTable
CREATE TABLE "OAuth2Application" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretHash" TEXT NOT NULL,
    "confidentialClient" BOOLEAN NOT NULL DEFAULT true,
    "skipSecondaryAuthorization" BOOLEAN NOT NULL DEFAULT false,
    "redirectUris" TEXT NOT NULL DEFAULT '[]',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "OAuth2ProviderRecord" (
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "grantId" TEXT,
    "uid" TEXT,
    "userCode" TEXT,
    "clientId" TEXT,
    "accountId" TEXT,
    "expiresAt" DATETIME,
    "consumedAt" DATETIME,

    PRIMARY KEY ("kind", "id")
);

-- CreateTable
CREATE TABLE "OAuth2ProviderKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "jwk" TEXT NOT NULL,
    "cookieKey" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "OAuth2Application_clientId_key" ON "OAuth2Application"("clientId");

-- CreateIndex
CREATE INDEX "OAuth2Application_userId_idx" ON "OAuth2Application"("userId");

-- CreateIndex
CREATE INDEX "OAuth2ProviderRecord_grantId_idx" ON "OAuth2ProviderRecord"("grantId");

-- CreateIndex
CREATE INDEX "OAuth2ProviderRecord_uid_idx" ON "OAuth2ProviderRecord"("uid");

-- CreateIndex
CREATE INDEX "OAuth2ProviderRecord_clientId_idx" ON "OAuth2ProviderRecord"("clientId");

-- CreateIndex
CREATE INDEX "OAuth2ProviderRecord_accountId_idx" ON "OAuth2ProviderRecord"("accountId");

