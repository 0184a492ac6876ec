-- Follows (Gitea's follow table), user blockings (user_blocking) and the user settings columns.
CREATE TABLE "Follow" (
    "id" BIGSERIAL NOT NULL,
    "userId" BIGINT NOT NULL,
    "followId" BIGINT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Follow_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Follow_followId_idx" ON "Follow"("followId");
CREATE UNIQUE INDEX "Follow_userId_followId_key" ON "Follow"("userId", "followId");
ALTER TABLE "Follow" ADD CONSTRAINT "Follow_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Follow" ADD CONSTRAINT "Follow_followId_fkey" FOREIGN KEY ("followId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "UserBlocking" (
    "id" BIGSERIAL NOT NULL,
    "blockerId" BIGINT NOT NULL,
    "blockeeId" BIGINT NOT NULL,
    "note" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "UserBlocking_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "UserBlocking_blockeeId_idx" ON "UserBlocking"("blockeeId");
CREATE UNIQUE INDEX "UserBlocking_blockerId_blockeeId_key" ON "UserBlocking"("blockerId", "blockeeId");
ALTER TABLE "UserBlocking" ADD CONSTRAINT "UserBlocking_blockerId_fkey" FOREIGN KEY ("blockerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "UserBlocking" ADD CONSTRAINT "UserBlocking_blockeeId_fkey" FOREIGN KEY ("blockeeId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "User" ADD COLUMN "theme" TEXT NOT NULL DEFAULT '';
ALTER TABLE "User" ADD COLUMN "diffViewStyle" TEXT NOT NULL DEFAULT '';
ALTER TABLE "User" ADD COLUMN "keepActivityPrivate" BOOLEAN NOT NULL DEFAULT false;
