/**
 * What tracked times and stopwatches share: who may track time on an issue (Gitea's
 * CanUseTimetracker), the timeline events they leave, Gitea's duration wording, and the
 * strict RFC 3339 parsing of the `since` / `before` filters.
 */
import { InvalidError } from '../errors';
import type { User } from '../records';
import type { RepoCtx } from './context';
import type { Prisma } from '../database';
import type { Issue } from '../../../generated/prisma/client';

/** Gitea's CommentType values of the time tracker's timeline events. */
export const TimeComment = { StartTracking: 12, StopTracking: 13, AddTimeManual: 14, CancelTracking: 15, DeleteTimeManual: 26 } as const;

type Tx = Omit<Prisma, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

export function timeTrackerEnabled(rc: RepoCtx): boolean {
  return rc.repo.enableTimeTracker;
}

/**
 * The tracker is on, and either anyone may track time or the caller is a writer of the issues,
 * the issue's poster or one of its assignees.
 */
export async function canUseTimetracker(prisma: Prisma, rc: RepoCtx, issue: Issue, doer: User): Promise<boolean> {
  if (!timeTrackerEnabled(rc)) return false;
  if (!rc.repo.allowOnlyContributorsToTrackTime || rc.canWrite || issue.posterId === doer.id) return true;
  return (await prisma.issueAssignee.count({ where: { issueId: issue.id, assigneeId: doer.id } })) > 0;
}

/** A time-tracker event on the issue's timeline; like every comment it bumps the issue's update time. */
export async function addTimeComment(tx: Tx, issue: Issue, posterId: number, type: number, content: string, now: Date, timeId: number | null = null): Promise<void> {
  await tx.comment.create({ data: { type, issueId: issue.id, repoId: issue.repoId, posterId, content, timeId, createdAt: now, updatedAt: now } });
  await tx.issue.update({ where: { id: issue.id }, data: { updatedAt: now } });
}

/** Whole seconds, as Gitea keeps created_unix. */
export function wholeSeconds(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

/** "2 hours 5 minutes", "1 minute", "30 seconds" (seconds only below a minute), "" for none: Gitea's SecToHours. */
export function secToHours(seconds: number): string {
  const hours = Math.trunc(seconds / 3600);
  const minutes = Math.trunc(seconds / 60) % 60;
  const part = (n: number, name: string) => (n === 1 ? `1 ${name}` : n > 1 ? `${n} ${name}s` : '');
  const text = [part(hours, 'hour'), part(minutes, 'minute')].filter(Boolean).join(' ');
  return text === '' && seconds > 0 ? part(seconds, 'second') : text;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A `since` / `before` query value as Go's time.Parse(time.RFC3339) reads it (blank = no
 * filter); anything else is Gitea's 422 with the parser's complaint.
 */
export function parseRfc3339(value: string | undefined): Date | undefined {
  const text = (value ?? '').trim();
  if (text === '') return undefined;
  const m = RFC3339.exec(text);
  const d = m ? new Date(text) : null;
  if (!d || Number.isNaN(d.getTime()) || Number(m![2]) > 12 || Number(m![4]) > 23 || Number(m![5]) > 59 || Number(m![6]) > 59) {
    throw new InvalidError(`parsing time ${JSON.stringify(text)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(text)} as RFC 3339`);
  }
  return d;
}
