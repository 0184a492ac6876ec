/**
 * Issue 6's services and background work, attached to the app at the root:
 *  - the services of issue 6 (created in services/orgs-services.ts) are wired together;
 *  - repository events (created, deleted, pushed) become webhook deliveries; the request that
 *    caused them is known through an AsyncLocalStorage entered on every request, so the
 *    sender/pusher is the real caller even though CORE's and GIT's services do not pass it;
 *  - repository creation in an organization follows Gitea: a creator without admin access
 *    through teams becomes an admin collaborator;
 *  - HTTP signatures are offered to the auth resolver;
 *  - the delivery worker and the cron scheduler start with the server and stop with it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { shared } from './shared';
import { ActionType } from '../services/activities';
import { AccessMode } from '../services/convert';
import { USER_TYPE_ORGANIZATION } from '../services/permissions';
import type { Repository, User } from '../services/records';
import { currentRefs, diffRefs, newCommits, readSnapshot, writeSnapshot, ZERO_SHA } from '../services/webhooks/push';
import * as git from '../services/git';

/** The request being served, for services that need to know who caused an event. */
export const requestContext = new AsyncLocalStorage<{ request: FastifyRequest }>();

type RepoWithOwner = Repository & { owner: User };

async function orgsRuntime(app: FastifyInstance) {
  const { prisma, config } = app;
  const s = app.services;
  const { webhooks, deliveries, packages, cron, httpsig } = s;
  webhooks.onQueued = () => deliveries.kick();
  app.auth.httpSignature = (request) => httpsig.verify(request);

  // Synchronous on purpose: enterWith must run in the request's own async context.
  app.addHook('onRequest', (request, _reply, done) => {
    requestContext.enterWith({ request });
    done();
  });

  /** The caller of the current request (API doer, or the git client's credentials). */
  async function currentActor(): Promise<User | null> {
    const request = requestContext.getStore()?.request;
    if (!request) return null;
    if (request.doer) return request.doer;
    try {
      return (await app.auth.resolveUser(request)).user;
    } catch {
      return null;
    }
  }

  const log = (err: unknown, what: string) => app.log.error({ err }, what);

  // --- repository events (wrapping CORE's RepoService; its behaviour is unchanged) ---
  const repos = s.repos;
  const create = repos.create.bind(repos);
  repos.create = async (doer: User, owner: User, input) => {
    const repo = await create(doer, owner, input);
    try {
      if (owner.type === USER_TYPE_ORGANIZATION && !doer.isAdmin && (await s.permissions.repoAccessMode(doer, repo)) < AccessMode.Admin) {
        await prisma.collaboration.upsert({
          where: { repoId_userId: { repoId: repo.id, userId: doer.id } },
          create: { repoId: repo.id, userId: doer.id, mode: AccessMode.Admin },
          update: { mode: AccessMode.Admin },
        });
      }
      await writeSnapshot(repos.diskPath(repo.owner.name, repo.name), await currentRefs(repos.diskPath(repo.owner.name, repo.name))).catch(() => undefined);
      await webhooks.copyDefaultHooks(repo.id);
      await webhooks.notifyRepository(doer, repo, 'created');
      // Gitea's action notifier: a create_repo row in the feeds.
      await s.activities.record({ opType: ActionType.CreateRepo, actUserId: doer.id, repo });
    } catch (err) {
      log(err, 'repository created: follow-up failed');
    }
    return repo;
  };

  const del = repos.delete.bind(repos);
  repos.delete = async (repo: RepoWithOwner, mode: number) => {
    // Queue before the row goes (the hooks of the repository itself go with it, as in Gitea).
    const actor = (await currentActor()) ?? repo.owner;
    if (mode >= AccessMode.Owner) await webhooks.notifyRepository(actor, repo, 'deleted').catch((err) => log(err, 'repository deleted: webhook failed'));
    await del(repo, mode);
  };

  const afterPush = repos.afterPush.bind(repos);
  repos.afterPush = async (repoId: number) => {
    const repo = await afterPush(repoId);
    try {
      await pushEvents(repo, (await currentActor()) ?? repo.owner);
    } catch (err) {
      log(err, 'push webhooks failed');
    }
    return repo;
  };

  async function pushEvents(repo: RepoWithOwner, pusher: User): Promise<void> {
    const repoPath = repos.diskPath(repo.owner.name, repo.name);
    const before = (await readSnapshot(repoPath)) ?? {};
    const after = await currentRefs(repoPath);
    await writeSnapshot(repoPath, after);
    const repoJson = webhooks.repoJson(repo);
    const sender = webhooks.userJson(pusher);
    const html = `${config.rootUrl}${repo.owner.name}/${repo.name}`;
    for (const change of diffRefs(before, after)) {
      const isTag = change.ref.startsWith('refs/tags/');
      const short = change.ref.replace(/^refs\/(heads|tags)\//, '');
      const branch = isTag ? undefined : short;
      const refType = isTag ? 'tag' : 'branch';
      if (change.after === ZERO_SHA) {
        await webhooks.queue(repo, 'delete', { ref: short, ref_type: refType, pusher_type: 'user', repository: repoJson, sender }, branch);
        await s.activities.record({ opType: isTag ? ActionType.DeleteTag : ActionType.DeleteBranch, actUserId: pusher.id, repo, refName: change.ref });
        continue;
      }
      if (change.before === ZERO_SHA) {
        await webhooks.queue(repo, 'create', { sha: change.after, ref: short, ref_type: refType, repository: repoJson, sender }, branch);
      }
      const { commits, total } = await newCommits(repoPath, change, before);
      const payloadCommits = commits.map((c) => ({
        id: c.id,
        message: c.message,
        url: `${html}/commit/${c.id}`,
        author: { ...c.author, username: '' },
        committer: { ...c.committer, username: '' },
        verification: null,
        timestamp: c.timestamp,
        added: c.added,
        removed: c.removed,
        modified: c.modified,
      }));
      // Gitea's feed row for a push: commit_repo (or push_tag) with the PushCommits JSON.
      const feedCommits = commits.slice(0, 5).map((c) => ({
        Sha1: c.id,
        Message: c.message,
        AuthorEmail: c.author.email,
        AuthorName: c.author.name,
        CommitterEmail: c.committer.email,
        CommitterName: c.committer.name,
        Timestamp: c.timestamp,
      }));
      await s.activities.record({
        opType: isTag ? ActionType.PushTag : ActionType.CommitRepo,
        actUserId: pusher.id,
        repo,
        refName: change.ref,
        content: isTag
          ? ''
          : JSON.stringify({
              Commits: feedCommits,
              HeadCommit: feedCommits[0] ?? null,
              CompareURL: change.before !== ZERO_SHA ? `${repo.owner.name}/${repo.name}/compare/${change.before}...${change.after}` : '',
              Len: total,
            }),
      });
      await webhooks.queue(
        repo,
        'push',
        {
          ref: change.ref,
          before: change.before,
          after: change.after,
          compare_url: change.before !== ZERO_SHA ? `${html}/compare/${change.before}...${change.after}` : '',
          commits: payloadCommits,
          total_commits: total,
          head_commit: payloadCommits[0] ?? null,
          repository: repoJson,
          pusher: sender,
          sender,
        },
        branch,
      );
    }
  }

  // --- issue and comment events: derived from the activity records ISSUES writes (the same
  // moments Gitea's notifier fires webhooks), so the tracker code needs no webhook calls ---
  const activities = s.activities;
  const record = activities.record.bind(activities);
  activities.record = async (input) => {
    await record(input);
    try {
      await issueEvents(input);
    } catch (err) {
      log(err, 'issue webhooks failed');
    }
  };

  async function issueEvents(input: Parameters<typeof record>[0]): Promise<void> {
    const action = { [ActionType.CreateIssue]: 'opened', [ActionType.CloseIssue]: 'closed', [ActionType.ReopenIssue]: 'reopened' }[input.opType as number];
    if (!action && input.opType !== ActionType.CommentIssue) return;
    const actor = await prisma.user.findUnique({ where: { id: input.actUserId } });
    if (!actor) return;
    const repo = await prisma.repository.findUnique({ where: { id: input.repo.id }, include: { owner: true } });
    if (!repo) return;
    const tracker = s.tracker;
    if (action) {
      const index = Number.parseInt((input.content ?? '').split('|')[0], 10);
      const issue = await prisma.issue.findFirst({ where: { repoId: repo.id, index } });
      if (!issue || issue.isPull) return;
      // Gitea converts the issue for a webhook without a viewer.
      const issueJson = (await tracker.issues.json(issue.id, repo, null)) as unknown as { number: number } & Record<string, unknown>;
      await webhooks.notifyIssue(actor, repo, action, issueJson);
      return;
    }
    if (!input.commentId) return;
    const comment = await prisma.comment.findUnique({ where: { id: input.commentId } });
    if (!comment) return;
    const rc = { repo, mode: AccessMode.Owner, doer: null, canWrite: true, isAdmin: false };
    const commentJson = (await tracker.comments.json(rc, comment.id)) as unknown as Record<string, unknown>;
    const issueJson = (await tracker.issues.json(comment.issueId, repo, null)) as unknown as Record<string, unknown>;
    await webhooks.notifyIssueComment(actor, repo, 'created', issueJson, commentJson);
  }

  // --- cron tasks (Gitea's names where Gitea has the task) ---
  cron.register({ name: 'deliver_hooks', schedule: '@every 1m', run: () => deliveries.runOnce() });
  cron.register({
    name: 'update_repo_size',
    schedule: '@every 24h',
    run: async () => {
      const all = await prisma.repository.findMany({ include: { owner: true } });
      for (const r of all) {
        const stats = await git.repoStats(repos.diskPath(r.owner.name, r.name)).catch(() => null);
        if (stats) await prisma.repository.update({ where: { id: r.id }, data: { size: stats.sizeKiB, isEmpty: stats.empty } });
      }
    },
  });
  cron.register({
    name: 'cleanup_hook_task_table',
    schedule: '@midnight',
    run: async () => {
      const cutoff = new Date(Date.now() - 7 * 24 * 3_600_000);
      await prisma.hookTask.deleteMany({ where: { isDelivered: true, createdAt: { lt: cutoff } } });
    },
  });
  cron.register({ name: 'cleanup_packages', schedule: '@midnight', run: () => packages.cleanupBlobs() });

  app.addHook('onReady', async () => {
    deliveries.start();
    await cron.start();
  });
  app.addHook('onClose', async () => {
    await cron.stop();
    await deliveries.stop();
  });
}

export default shared(orgsRuntime);
