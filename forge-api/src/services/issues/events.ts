/**
 * The timeline rows of label, milestone and deadline changes, as Gitea records them: one
 * label event per label added (content "1") or removed (content ""), one milestone event
 * naming the milestone before and after, and a deadline event whose content is the day in
 * the server's time zone ("2030-01-01"; "new|old" when modified; the old day when removed).
 * Every writer of these changes builds its rows here, so the shapes stay one rule.
 */
import type { Issue } from '../../../generated/prisma/client';

export const EventType = { Label: 7, Milestone: 8, AddedDeadline: 16, ModifiedDeadline: 17, RemovedDeadline: 18 } as const;

type Row = { type: number; issueId: number; repoId: number; posterId: number; content?: string; labelId?: number; oldMilestoneId?: number | null; milestoneId?: number | null; createdAt: Date; updatedAt: Date };

function base(issue: Pick<Issue, 'id' | 'repoId'>, doerId: number, at: Date) {
  return { issueId: issue.id, repoId: issue.repoId, posterId: doerId, createdAt: at, updatedAt: at };
}

/** Label events: removals and additions in the order given. */
export function labelEvents(issue: Pick<Issue, 'id' | 'repoId'>, doerId: number, changes: { labelId: number; added: boolean }[], at = new Date()): Row[] {
  return changes.map((c) => ({ type: EventType.Label, ...base(issue, doerId, at), labelId: c.labelId, content: c.added ? '1' : '' }));
}

export function milestoneEvent(issue: Pick<Issue, 'id' | 'repoId'>, doerId: number, oldId: number | null, newId: number | null, at = new Date()): Row {
  return { type: EventType.Milestone, ...base(issue, doerId, at), oldMilestoneId: oldId || null, milestoneId: newId || null };
}

/** Gitea's TimeStamp.FormatDate: the calendar day in the server's zone. */
function day(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The deadline event of a change from `before` to `after`; null when nothing changed. */
export function deadlineEvent(issue: Pick<Issue, 'id' | 'repoId'>, doerId: number, before: Date | null, after: Date | null, at = new Date()): Row | null {
  if ((before?.getTime() ?? 0) === (after?.getTime() ?? 0)) return null;
  if (!after) return { type: EventType.RemovedDeadline, ...base(issue, doerId, at), content: day(before!) };
  if (!before) return { type: EventType.AddedDeadline, ...base(issue, doerId, at), content: day(after) };
  return { type: EventType.ModifiedDeadline, ...base(issue, doerId, at), content: `${day(after)}|${day(before)}` };
}
