-- Stars (Gitea's star table): one row per user and starred repository.
CREATE TABLE "Star" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Star_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Star_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "Star_repoId_idx" ON "Star"("repoId");

CREATE INDEX "Star_createdAt_idx" ON "Star"("createdAt");

CREATE UNIQUE INDEX "Star_userId_repoId_key" ON "Star"("userId", "repoId");

