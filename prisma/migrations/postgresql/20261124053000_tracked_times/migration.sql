-- Tracked times and stopwatches (Gitea's tracked_time and stopwatch tables); comments of the
-- add-time and stop-tracking events point at their tracked time (Gitea's comment.time_id); int64 columns.
ALTER TABLE "Comment" ADD COLUMN "timeId" BIGINT;

CREATE TABLE "TrackedTime" (
    "id" BIGSERIAL NOT NULL,
    "issueId" BIGINT NOT NULL,
    "userId" BIGINT NOT NULL,
    "time" BIGINT NOT NULL,
    "deleted" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "TrackedTime_pkey" PRIMARY KEY ("id")
);
CREATE TABLE "Stopwatch" (
    "id" BIGSERIAL NOT NULL,
    "issueId" BIGINT NOT NULL,
    "userId" BIGINT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Stopwatch_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "TrackedTime_issueId_userId_idx" ON "TrackedTime"("issueId", "userId");
CREATE INDEX "TrackedTime_userId_createdAt_idx" ON "TrackedTime"("userId", "createdAt");
CREATE UNIQUE INDEX "Stopwatch_userId_key" ON "Stopwatch"("userId");
CREATE INDEX "Stopwatch_issueId_idx" ON "Stopwatch"("issueId");
ALTER TABLE "TrackedTime" ADD CONSTRAINT "TrackedTime_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Stopwatch" ADD CONSTRAINT "Stopwatch_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Stopwatch" ADD CONSTRAINT "Stopwatch_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
