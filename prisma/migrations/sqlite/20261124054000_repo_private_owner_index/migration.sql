-- Counting the matches of a repository search (private flag + visible owners) from the index alone.
CREATE INDEX "Repository_isPrivate_ownerId_idx" ON "Repository"("isPrivate", "ownerId");
