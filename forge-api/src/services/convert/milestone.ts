/** structs.Milestone. */
import type { Milestone } from '../../../generated/prisma/client';
import { fmtTime } from './common';

export function toMilestone(m: Milestone) {
  return {
    id: m.id,
    title: m.name,
    description: m.content,
    state: m.isClosed ? 'closed' : 'open',
    open_issues: m.numIssues - m.numClosedIssues,
    closed_issues: m.numClosedIssues,
    created_at: fmtTime(m.createdAt),
    updated_at: fmtTime(m.updatedAt),
    closed_at: m.closedAt ? fmtTime(m.closedAt) : null,
    due_on: m.deadline ? fmtTime(m.deadline) : null,
  };
}
