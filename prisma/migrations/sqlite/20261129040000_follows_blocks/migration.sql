-- CreateTable
CREATE TABLE "Follow" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "followId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Follow_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Follow_followId_fkey" FOREIGN KEY ("followId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "UserBlocking" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "blockerId" INTEGER NOT NULL,
    "blockeeId" INTEGER NOT NULL,
    "note" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "UserBlocking_blockerId_fkey" FOREIGN KEY ("blockerId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "UserBlocking_blockeeId_fkey" FOREIGN KEY ("blockeeId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- AlterTable (ADD COLUMN, not a table rebuild, so that columns other migrations add to "User" stay)
ALTER TABLE "User" ADD COLUMN "theme" TEXT NOT NULL DEFAULT '';
ALTER TABLE "User" ADD COLUMN "diffViewStyle" TEXT NOT NULL DEFAULT '';
ALTER TABLE "User" ADD COLUMN "keepActivityPrivate" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "Follow_followId_idx" ON "Follow"("followId");

-- CreateIndex
CREATE UNIQUE INDEX "Follow_userId_followId_key" ON "Follow"("userId", "followId");

-- CreateIndex
CREATE INDEX "UserBlocking_blockeeId_idx" ON "UserBlocking"("blockeeId");

-- CreateIndex
CREATE UNIQUE INDEX "UserBlocking_blockerId_blockeeId_key" ON "UserBlocking"("blockerId", "blockeeId");

