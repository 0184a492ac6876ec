-- Browser sessions signed out before their cookies expired (the cookie's MAC, until its expiry).
-- CreateTable
CREATE TABLE "SignedOutSession" (
    "mac" TEXT NOT NULL PRIMARY KEY,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SignedOutSession_expiresAt_idx" ON "SignedOutSession"("expiresAt");

