-- Two-factor scratch tokens (Gitea's two_factor scratch_salt/scratch_hash), one per enrolled user.
CREATE TABLE "TwoFactorScratch" (
    "userId" BIGINT NOT NULL,
    "salt" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TwoFactorScratch_pkey" PRIMARY KEY ("userId")
);
