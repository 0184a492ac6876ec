/** The scheduled tasks of the forge, under Gitea's names where Gitea has the task. */
import type { Services } from '.';

/** Delivered hook tasks are kept this long (Gitea's cleanup_hook_task_table default). */
const HOOK_TASK_RETENTION_MS = 7 * 24 * 3_600_000;

export function registerCronTasks(s: Pick<Services, 'cron' | 'deliveries' | 'repos' | 'webhooks' | 'packages' | 'pushMirrors'>): void {
  s.cron.register({ name: 'deliver_hooks', schedule: '@every 1m', run: () => s.deliveries.runOnce() });
  s.cron.register({ name: 'update_repo_size', schedule: '@every 24h', run: () => s.repos.refreshSizes() });
  s.cron.register({ name: 'cleanup_hook_task_table', schedule: '@midnight', run: () => s.webhooks.deleteDeliveredBefore(new Date(Date.now() - HOOK_TASK_RETENTION_MS)) });
  // Gitea's update_mirrors: mirrors whose interval has passed are queued (push side; at most PUSH_LIMIT a run).
  s.cron.register({ name: 'update_mirrors', schedule: '@every 10m', run: () => s.pushMirrors.queueDue() });
  s.cron.register({ name: 'cleanup_packages', schedule: '@midnight', run: () => s.packages.cleanupBlobs() });
}
