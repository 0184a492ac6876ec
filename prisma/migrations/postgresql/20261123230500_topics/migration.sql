-- Repository topics (Gitea's topic and repo_topic tables, and repository.topics).
ALTER TABLE "Repository" ADD COLUMN "topics" TEXT NOT NULL DEFAULT '';

CREATE TABLE "Topic" (
    "id" BIGSERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Topic_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "RepoTopic" (
    "repoId" BIGINT NOT NULL,
    "topicId" BIGINT NOT NULL,

    CONSTRAINT "RepoTopic_pkey" PRIMARY KEY ("repoId", "topicId")
);

CREATE UNIQUE INDEX "Topic_name_key" ON "Topic"("name");
CREATE INDEX "RepoTopic_topicId_idx" ON "RepoTopic"("topicId");

ALTER TABLE "RepoTopic" ADD CONSTRAINT "RepoTopic_repoId_fkey" FOREIGN KEY ("repoId") REFERENCES "Repository"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RepoTopic" ADD CONSTRAINT "RepoTopic_topicId_fkey" FOREIGN KEY ("topicId") REFERENCES "Topic"("id") ON DELETE CASCADE ON UPDATE CASCADE;
