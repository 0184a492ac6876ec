-- Releases and release assets (attachments with a releaseId).
CREATE TABLE "Release" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "repoId" INTEGER NOT NULL,
    "publisherId" INTEGER NOT NULL,
    "tagName" TEXT NOT NULL,
    "lowerTagName" TEXT NOT NULL,
    "target" TEXT NOT NULL DEFAULT '',
    "title" TEXT NOT NULL DEFAULT '',
    "note" TEXT NOT NULL DEFAULT '',
    "sha1" TEXT NOT NULL DEFAULT '',
    "numCommits" INTEGER NOT NULL DEFAULT 0,
    "isDraft" BOOLEAN NOT NULL DEFAULT false,
    "isPrerelease" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Release_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Release_repoId_lowerTagName_key" ON "Release"("repoId", "lowerTagName");
CREATE INDEX "Release_repoId_createdAt_idx" ON "Release"("repoId", "createdAt");

-- SQLite cannot add a foreign key to an existing table: rebuild Attachment with releaseId.
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Attachment" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "uuid" TEXT NOT NULL,
    "repoId" INTEGER NOT NULL,
    "issueId" INTEGER,
    "commentId" INTEGER,
    "uploaderId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "size" BIGINT NOT NULL DEFAULT 0,
    "downloadCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "releaseId" INTEGER,
    CONSTRAINT "Attachment_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Attachment_commentId_fkey" FOREIGN KEY ("commentId") REFERENCES "Comment" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Attachment_releaseId_fkey" FOREIGN KEY ("releaseId") REFERENCES "Release" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Attachment" ("id", "uuid", "repoId", "issueId", "commentId", "uploaderId", "name", "size", "downloadCount", "createdAt")
    SELECT "id", "uuid", "repoId", "issueId", "commentId", "uploaderId", "name", "size", "downloadCount", "createdAt" FROM "Attachment";
DROP TABLE "Attachment";
ALTER TABLE "new_Attachment" RENAME TO "Attachment";
CREATE UNIQUE INDEX "Attachment_uuid_key" ON "Attachment"("uuid");
CREATE INDEX "Attachment_issueId_idx" ON "Attachment"("issueId");
CREATE INDEX "Attachment_commentId_idx" ON "Attachment"("commentId");
CREATE INDEX "Attachment_releaseId_idx" ON "Attachment"("releaseId");
PRAGMA foreign_key_check;
PRAGMA foreign_keys=ON;
