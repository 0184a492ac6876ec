-- OAuth2 applications (Gitea's oauth2_application) and the OAuth2/OpenID provider's stored records and key.
CREATE TABLE "OAuth2Application" (
    "id" BIGSERIAL NOT NULL,
    "userId" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecretHash" TEXT NOT NULL,
    "confidentialClient" BOOLEAN NOT NULL DEFAULT true,
    "skipSecondaryAuthorization" BOOLEAN NOT NULL DEFAULT false,
    "redirectUris" TEXT NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OAuth2Application_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "OAuth2Application_clientId_key" ON "OAuth2Application"("clientId");
CREATE INDEX "OAuth2Application_userId_idx" ON "OAuth2Application"("userId");

CREATE TABLE "OAuth2ProviderRecord" (
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "grantId" TEXT,
    "uid" TEXT,
    "userCode" TEXT,
    "clientId" TEXT,
    "accountId" TEXT,
    "expiresAt" TIMESTAMP(3),
    "consumedAt" TIMESTAMP(3),
    CONSTRAINT "OAuth2ProviderRecord_pkey" PRIMARY KEY ("kind", "id")
);
CREATE INDEX "OAuth2ProviderRecord_grantId_idx" ON "OAuth2ProviderRecord"("grantId");
CREATE INDEX "OAuth2ProviderRecord_uid_idx" ON "OAuth2ProviderRecord"("uid");
CREATE INDEX "OAuth2ProviderRecord_clientId_idx" ON "OAuth2ProviderRecord"("clientId");
CREATE INDEX "OAuth2ProviderRecord_accountId_idx" ON "OAuth2ProviderRecord"("accountId");

CREATE TABLE "OAuth2ProviderKey" (
    "id" BIGINT NOT NULL,
    "jwk" TEXT NOT NULL,
    "cookieKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OAuth2ProviderKey_pkey" PRIMARY KEY ("id")
);
