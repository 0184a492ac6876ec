-- Browser sessions signed out before their cookies expired (the cookie's MAC, until its expiry).
-- CreateTable
CREATE TABLE "SignedOutSession" (
    "mac" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignedOutSession_pkey" PRIMARY KEY ("mac")
);

-- CreateIndex
CREATE INDEX "SignedOutSession_expiresAt_idx" ON "SignedOutSession"("expiresAt");
