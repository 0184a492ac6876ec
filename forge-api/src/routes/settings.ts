import type { FastifyInstance } from 'fastify';
import { bool, int, obj, strList } from '../schemas';

/** GET /settings/{api,ui,repository} (attachment settings come with attachments): Gitea's exposed settings. */
export default async function settingsRoutes(app: FastifyInstance) {
  const c = app.config;
  app.get(
    '/settings/api',
    {
      schema: {
        tags: ['settings'],
        operationId: 'getGeneralAPISettings',
        response: { 200: obj({ max_response_items: int, default_paging_num: int, default_git_trees_per_page: int, default_max_blob_size: int, default_max_response_size: int }) },
      },
    },
    async () => ({
      max_response_items: c.maxResponseItems,
      default_paging_num: c.defaultPagingNum,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10485760,
      default_max_response_size: 104857600,
    }),
  );
  app.get(
    '/settings/ui',
    { schema: { tags: ['settings'], operationId: 'getGeneralUISettings', response: { 200: obj({ default_theme: { type: 'string' }, allowed_reactions: strList, custom_emojis: strList }) } } },
    async () => ({ default_theme: 'gitea-auto', allowed_reactions: ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'], custom_emojis: ['git', 'gitea', 'codeberg', 'gitlab', 'github', 'gogs'] }),
  );
  app.get(
    '/settings/repository',
    {
      schema: {
        tags: ['settings'],
        operationId: 'getGeneralRepositorySettings',
        response: { 200: obj({ mirrors_disabled: bool, http_git_disabled: bool, migrations_disabled: bool, stars_disabled: bool, time_tracking_disabled: bool, lfs_disabled: bool }) },
      },
    },
    async () => ({ mirrors_disabled: false, http_git_disabled: false, migrations_disabled: false, stars_disabled: false, time_tracking_disabled: false, lfs_disabled: true }),
  );
}
