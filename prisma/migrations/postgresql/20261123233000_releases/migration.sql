-- Releases and release assets (attachments with a releaseId).
CREATE TABLE "Release" (
    "id" BIGSERIAL NOT NULL,
    "repoId" BIGINT NOT NULL,
    "publisherId" BIGINT NOT NULL,
    "tagName" TEXT NOT NULL,
    "lowerTagName" TEXT NOT NULL,
    "target" TEXT NOT NULL DEFAULT '',
    "title" TEXT NOT NULL DEFAULT '',
    "note" TEXT NOT NULL DEFAULT '',
    "sha1" TEXT NOT NULL DEFAULT '',
    "numCommits" BIGINT NOT NULL DEFAULT 0,
    "isDraft" BOOLEAN NOT NULL DEFAULT false,
    "isPrerelease" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Release_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Release_repoId_lowerTagName_key" ON "Release"("repoId", "lowerTagName");
CREATE INDEX "Release_repoId_createdAt_idx" ON "Release"("repoId", "createdAt");
ALTER TABLE "Release" ADD CONSTRAINT "Release_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "Attachment" ADD COLUMN "releaseId" BIGINT;
CREATE INDEX "Attachment_releaseId_idx" ON "Attachment"("releaseId");
ALTER TABLE "Attachment" ADD CONSTRAINT "Attachment_releaseId_fkey" FOREIGN KEY ("releaseId") REFERENCES "Release"("id") ON DELETE CASCADE ON UPDATE CASCADE;
