-- Tracked times and stopwatches (Gitea's tracked_time and stopwatch tables); comments of the
-- add-time and stop-tracking events point at their tracked time (Gitea's comment.time_id).
ALTER TABLE "Comment" ADD COLUMN "timeId" INTEGER;

CREATE TABLE "TrackedTime" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "issueId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "time" INTEGER NOT NULL,
    "deleted" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "TrackedTime_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "Stopwatch" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "issueId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Stopwatch_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Stopwatch_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "TrackedTime_issueId_userId_idx" ON "TrackedTime"("issueId", "userId");

CREATE INDEX "TrackedTime_userId_createdAt_idx" ON "TrackedTime"("userId", "createdAt");

CREATE UNIQUE INDEX "Stopwatch_userId_key" ON "Stopwatch"("userId");

CREATE INDEX "Stopwatch_issueId_idx" ON "Stopwatch"("issueId");
