/** structs.Reaction. */
import type { Reaction } from '../../../generated/prisma/client';
import type { User } from '../records';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { viewedUser } from './user';

export function toReaction(c: ConvertContext, r: Reaction, user: User | undefined, doer: User | null) {
  return { user: viewedUser(c, user, doer), content: r.type, created_at: fmtTime(r.createdAt) };
}
