/** The scheduled tasks of the forge, under Gitea's names where Gitea has the task. */
import type { Services } from '.';

/** Delivered hook tasks are kept this long (Gitea's cleanup_hook_task_table default). */
const HOOK_TASK_RETENTION_MS = 7 * 24 * 3_600_000;

export function registerCronTasks(s: Pick<Services, 'cron' | 'deliveries' | 'repos' | 'webhooks' | 'packages' | 'pushMirrors' | 'migrations' | 'notifier'>): void {
  s.cron.register({ name: 'deliver_hooks', schedule: '@every 1m', run: () => s.deliveries.runOnce() });
  s.cron.register({ name: 'update_repo_size', schedule: '@every 24h', run: () => s.repos.refreshSizes() });
  s.cron.register({ name: 'cleanup_hook_task_table', schedule: '@midnight', run: () => s.webhooks.deleteDeliveredBefore(new Date(Date.now() - HOOK_TASK_RETENTION_MS)) });
  // Gitea's update_mirrors: pull mirrors whose next update time has come are fetched (at most
  // PULL_LIMIT a run), and push mirrors whose interval has passed are queued (at most PUSH_LIMIT).
  s.cron.register({
    name: 'update_mirrors',
    schedule: '@every 10m',
    run: async () => {
      await s.pushMirrors.queueDue();
      await s.migrations.syncDue((err, what) => s.notifier.logError(err, what));
    },
  });
  s.cron.register({ name: 'cleanup_packages', schedule: '@midnight', run: () => s.packages.cleanupBlobs() });
}
