-- Two-factor scratch tokens (Gitea's two_factor scratch_salt/scratch_hash), one per enrolled user.
-- CreateTable
CREATE TABLE "TwoFactorScratch" (
    "userId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "salt" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

