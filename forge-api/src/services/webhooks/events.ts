/**
 * Webhook event names and how a hook's `events` list is read (Gitea's webhook_module events and
 * routers/api/v1/utils/hook.go updateHookEvents): `issues` switches on every issue_* event,
 * `pull_request` every pull_request_* event, `pull_request_review` the three review events;
 * an empty list means `push` only.
 */

import { compileGlob, type Glob } from '../glob';

/** Every event, in Gitea's order (the order a hook lists its events in). */
export const ALL_EVENTS = [
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review_approved',
  'pull_request_review_rejected',
  'pull_request_review_comment',
  'pull_request_sync',
  'pull_request_review_request',
  'wiki',
  'repository',
  'release',
  'package',
  'status',
  'workflow_run',
  'workflow_job',
] as const;
export type HookEvent = (typeof ALL_EVENTS)[number];

/** Hook types accepted on creation (the spec's list, plus matrix which Gitea also accepts). */
export const HOOK_TYPES = ['dingtalk', 'discord', 'gitea', 'gogs', 'msteams', 'slack', 'telegram', 'feishu', 'matrix', 'wechatwork', 'packagist'];
export const CONTENT_TYPES = ['json', 'form'];

const ISSUE_EVENTS = new Set(['issue_assign', 'issue_label', 'issue_milestone', 'issue_comment']);
const PULL_EVENTS = new Set(['pull_request_assign', 'pull_request_label', 'pull_request_milestone', 'pull_request_comment', 'pull_request_sync', 'pull_request_review_request']);
const REVIEW_EVENTS = new Set(['pull_request_review_approved', 'pull_request_review_rejected', 'pull_request_review_comment']);

/** The expanded, ordered list of events a hook created with `input` listens to. */
export function expandEvents(input: string[] | undefined): HookEvent[] {
  const given = new Set((input && input.length ? input : ['push']).map((e) => e.trim().toLowerCase()));
  const has = (e: string) => given.has(e);
  return ALL_EVENTS.filter((e) => {
    if (e === 'issues') return has('issues_only') || has('issues');
    if (ISSUE_EVENTS.has(e)) return has(e) || has('issues');
    if (e === 'pull_request') return has('pull_request_only') || has('pull_request');
    if (PULL_EVENTS.has(e)) return has(e) || has('pull_request');
    if (REVIEW_EVENTS.has(e)) return has(e) || has('pull_request') || has('pull_request_review');
    return has(e);
  });
}

/** X-Gitea-Event for an exact event type (issue_* collapse to `issues`, the other pull_request_* to `pull_request`, as Gitea's headers do). */
export function headerEvent(eventType: HookEvent): string {
  if (eventType === 'issue_comment' || eventType === 'pull_request_comment') return 'issue_comment';
  if (eventType.startsWith('issue_')) return 'issues';
  // Gitea names the review events' header after the verdict, not the group.
  if (eventType === 'pull_request_review_approved') return 'pull_request_approved';
  if (eventType === 'pull_request_review_rejected') return 'pull_request_rejected';
  if (eventType === 'pull_request_review_comment') return 'pull_request_comment';
  if (eventType.startsWith('pull_request_')) return 'pull_request';
  return eventType;
}

/**
 * Branch filter, as Gitea's checkBranchFilter: empty, `*` or `**` pass everything; otherwise
 * the glob must match the branch name or the full ref (`refs/heads/<branch>`). The glob runs
 * on the linear matcher of services/glob.ts: a filter is user input and is matched on every
 * push. An invalid filter (refused when the hook is saved) matches nothing.
 */
export function branchMatches(filter: string, branch: string): boolean {
  if (filter === '' || filter === '*' || filter === '**') return true;
  let glob: Glob;
  try {
    glob = compileGlob(filter);
  } catch {
    return false;
  }
  return glob.match(branch) || glob.match(`refs/heads/${branch}`);
}
