/** The issue tracker's API routes (registered under /api/v1) and the root download route. */
import type { FastifyInstance } from 'fastify';
import issueRoutes from './issues';
import issueCommentRoutes from './issue-comments';
import issueAttachmentRoutes, { attachmentDownloadRoutes } from './issue-attachments';
import labelRoutes from './labels';
import milestoneRoutes from './milestones';
import notificationRoutes from './notifications';
import watchRoutes from './watches';

export default async function trackerRoutes(app: FastifyInstance) {
  await app.register(issueRoutes);
  await app.register(issueCommentRoutes);
  await app.register(issueAttachmentRoutes);
  await app.register(labelRoutes);
  await app.register(milestoneRoutes);
  await app.register(notificationRoutes);
  await app.register(watchRoutes);
}

export { attachmentDownloadRoutes };
