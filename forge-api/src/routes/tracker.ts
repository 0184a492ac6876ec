/** The issue tracker's API routes (registered under /api/v1) and the root download route. */
import type { FastifyInstance } from 'fastify';
import { parseJsonBody } from '../plugins/input';
import { ValidationError } from '../services/errors';
import issueRoutes from './issues';
import issuePeopleRoutes from './issue-people';
import issueCommentRoutes from './issue-comments';
import issueAttachmentRoutes, { attachmentDownloadRoutes } from './issue-attachments';
import labelRoutes from './labels';
import milestoneRoutes from './milestones';
import notificationRoutes from './notifications';
import watchRoutes from './watches';
import trackedTimeRoutes from './tracked-times';

/**
 * Body parsing as Gitea's clients need it (this plugin's routes only): gitea-js sends some JSON
 * bodies without a Content-Type (so fetch labels them text/plain, e.g. dependencies) and
 * others as an empty application/json body (PUT /notifications); Gitea reads both.
 */
function lenientJson(app: FastifyInstance) {
  const parse = (_req: unknown, body: string, done: (err: Error | null, value?: unknown) => void) => {
    if (body.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      if (err instanceof ValidationError) return done(err);
      done(Object.assign(new Error(`invalid JSON body: ${(err as Error).message}`), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }));
    }
  };
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parse);
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (/^\s*[[{]/.test(text)) return parse(req, text, done);
    done(null, text);
  });
}

export default async function trackerRoutes(app: FastifyInstance) {
  lenientJson(app);
  await app.register(issueRoutes);
  await app.register(issuePeopleRoutes);
  await app.register(issueCommentRoutes);
  await app.register(issueAttachmentRoutes);
  await app.register(labelRoutes);
  await app.register(milestoneRoutes);
  await app.register(notificationRoutes);
  await app.register(watchRoutes);
  await app.register(trackedTimeRoutes);
}

export { attachmentDownloadRoutes };
