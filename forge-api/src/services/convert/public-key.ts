/** structs.PublicKey. */
import type { PublicKey, User } from '../records';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import { toUser } from './user';

/**
 * convert.ToPublicKey; the owner and the key type are private information, shown (with the
 * owner's own view of themselves) only to the owner and site admins, as Gitea does.
 */
export function toPublicKey(c: ConvertContext, k: PublicKey, owner: User, doer: User | null) {
  const privileged = doer !== null && (doer.isAdmin || doer.id === owner.id);
  return {
    id: k.id,
    key: k.content,
    url: `${c.rootUrl}api/v1/user/keys/${k.id}`,
    title: k.name,
    fingerprint: k.fingerprint,
    created_at: fmtTime(k.createdAt),
    last_used_at: fmtTime(k.updatedAt),
    ...(privileged ? { user: toUser(c, owner, true, true) } : {}),
    ...(privileged ? { key_type: k.keyType } : {}),
  };
}
