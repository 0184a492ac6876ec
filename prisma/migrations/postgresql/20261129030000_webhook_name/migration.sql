-- A webhook's name (Gitea 1.27's webhook.name): shown and set through the hook API.
ALTER TABLE "Webhook" ADD COLUMN "name" TEXT NOT NULL DEFAULT '';
