-- Repository topics (Gitea's topic and repo_topic tables, and repository.topics).
ALTER TABLE "Repository" ADD COLUMN "topics" TEXT NOT NULL DEFAULT '';

CREATE TABLE "Topic" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE "RepoTopic" (
    "repoId" INTEGER NOT NULL,
    "topicId" INTEGER NOT NULL,

    PRIMARY KEY ("repoId", "topicId"),
    CONSTRAINT "RepoTopic_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "RepoTopic_topicId_fkey" FOREIGN KEY ("topicId") REFERENCES "Topic" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE UNIQUE INDEX "Topic_name_key" ON "Topic"("name");
CREATE INDEX "RepoTopic_topicId_idx" ON "RepoTopic"("topicId");
