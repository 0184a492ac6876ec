-- CreateTable
CREATE TABLE "Issue" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "repoId" INTEGER NOT NULL,
    "index" INTEGER NOT NULL,
    "posterId" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "body" TEXT NOT NULL DEFAULT '',
    "ref" TEXT NOT NULL DEFAULT '',
    "isClosed" BOOLEAN NOT NULL DEFAULT false,
    "isPull" BOOLEAN NOT NULL DEFAULT false,
    "isLocked" BOOLEAN NOT NULL DEFAULT false,
    "pinOrder" INTEGER NOT NULL DEFAULT 0,
    "milestoneId" INTEGER,
    "numComments" INTEGER NOT NULL DEFAULT 0,
    "deadline" DATETIME,
    "originalAuthor" TEXT NOT NULL DEFAULT '',
    "originalAuthorId" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closedAt" DATETIME,
    CONSTRAINT "Issue_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Issue_milestoneId_fkey" FOREIGN KEY ("milestoneId") REFERENCES "Milestone" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "IssueAssignee" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "issueId" INTEGER NOT NULL,
    "assigneeId" INTEGER NOT NULL,
    CONSTRAINT "IssueAssignee_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "IssueLabel" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "issueId" INTEGER NOT NULL,
    "labelId" INTEGER NOT NULL,
    CONSTRAINT "IssueLabel_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "IssueLabel_labelId_fkey" FOREIGN KEY ("labelId") REFERENCES "Label" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Milestone" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "repoId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "isClosed" BOOLEAN NOT NULL DEFAULT false,
    "numIssues" INTEGER NOT NULL DEFAULT 0,
    "numClosedIssues" INTEGER NOT NULL DEFAULT 0,
    "deadline" DATETIME,
    "closedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Milestone_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Comment" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "type" INTEGER NOT NULL DEFAULT 0,
    "issueId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "posterId" INTEGER NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "dependentIssueId" INTEGER,
    "originalAuthor" TEXT NOT NULL DEFAULT '',
    "originalAuthorId" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Comment_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Attachment" (
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
    CONSTRAINT "Attachment_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Attachment_commentId_fkey" FOREIGN KEY ("commentId") REFERENCES "Comment" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Reaction" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "type" TEXT NOT NULL,
    "issueId" INTEGER NOT NULL,
    "commentId" INTEGER NOT NULL DEFAULT 0,
    "userId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Reaction_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "IssueDependency" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "issueId" INTEGER NOT NULL,
    "dependencyId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "IssueDependency_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "IssueDependency_dependencyId_fkey" FOREIGN KEY ("dependencyId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Notification" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "issueId" INTEGER NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 1,
    "source" INTEGER NOT NULL DEFAULT 1,
    "commentId" INTEGER,
    "updatedById" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Notification_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Notification_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Watch" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "mode" INTEGER NOT NULL DEFAULT 1,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Watch_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Watch_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "IssueWatch" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "issueId" INTEGER NOT NULL,
    "isWatching" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "IssueWatch_issueId_fkey" FOREIGN KEY ("issueId") REFERENCES "Issue" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Activity" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userId" INTEGER NOT NULL,
    "opType" INTEGER NOT NULL,
    "actUserId" INTEGER NOT NULL,
    "repoId" INTEGER NOT NULL,
    "commentId" INTEGER,
    "isPrivate" BOOLEAN NOT NULL DEFAULT false,
    "refName" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Activity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Activity_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Issue_repoId_isPull_isClosed_createdAt_idx" ON "Issue"("repoId", "isPull", "isClosed", "createdAt");

-- CreateIndex
CREATE INDEX "Issue_posterId_idx" ON "Issue"("posterId");

-- CreateIndex
CREATE INDEX "Issue_milestoneId_idx" ON "Issue"("milestoneId");

-- CreateIndex
CREATE INDEX "Issue_updatedAt_idx" ON "Issue"("updatedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Issue_repoId_index_key" ON "Issue"("repoId", "index");

-- CreateIndex
CREATE INDEX "IssueAssignee_assigneeId_idx" ON "IssueAssignee"("assigneeId");

-- CreateIndex
CREATE UNIQUE INDEX "IssueAssignee_issueId_assigneeId_key" ON "IssueAssignee"("issueId", "assigneeId");

-- CreateIndex
CREATE INDEX "IssueLabel_labelId_idx" ON "IssueLabel"("labelId");

-- CreateIndex
CREATE UNIQUE INDEX "IssueLabel_issueId_labelId_key" ON "IssueLabel"("issueId", "labelId");

-- CreateIndex
CREATE INDEX "Milestone_repoId_isClosed_idx" ON "Milestone"("repoId", "isClosed");

-- CreateIndex
CREATE INDEX "Comment_issueId_createdAt_idx" ON "Comment"("issueId", "createdAt");

-- CreateIndex
CREATE INDEX "Comment_repoId_type_createdAt_idx" ON "Comment"("repoId", "type", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Attachment_uuid_key" ON "Attachment"("uuid");

-- CreateIndex
CREATE INDEX "Attachment_issueId_idx" ON "Attachment"("issueId");

-- CreateIndex
CREATE INDEX "Attachment_commentId_idx" ON "Attachment"("commentId");

-- CreateIndex
CREATE INDEX "Reaction_issueId_commentId_idx" ON "Reaction"("issueId", "commentId");

-- CreateIndex
CREATE UNIQUE INDEX "Reaction_type_issueId_commentId_userId_key" ON "Reaction"("type", "issueId", "commentId", "userId");

-- CreateIndex
CREATE INDEX "IssueDependency_dependencyId_idx" ON "IssueDependency"("dependencyId");

-- CreateIndex
CREATE UNIQUE INDEX "IssueDependency_issueId_dependencyId_key" ON "IssueDependency"("issueId", "dependencyId");

-- CreateIndex
CREATE INDEX "Notification_userId_status_updatedAt_idx" ON "Notification"("userId", "status", "updatedAt");

-- CreateIndex
CREATE INDEX "Notification_repoId_idx" ON "Notification"("repoId");

-- CreateIndex
CREATE UNIQUE INDEX "Notification_userId_issueId_key" ON "Notification"("userId", "issueId");

-- CreateIndex
CREATE INDEX "Watch_repoId_idx" ON "Watch"("repoId");

-- CreateIndex
CREATE UNIQUE INDEX "Watch_userId_repoId_key" ON "Watch"("userId", "repoId");

-- CreateIndex
CREATE UNIQUE INDEX "IssueWatch_userId_issueId_key" ON "IssueWatch"("userId", "issueId");

-- CreateIndex
CREATE INDEX "Activity_userId_createdAt_idx" ON "Activity"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "Activity_repoId_createdAt_idx" ON "Activity"("repoId", "createdAt");

-- CreateIndex
CREATE INDEX "Activity_actUserId_createdAt_idx" ON "Activity"("actUserId", "createdAt");

