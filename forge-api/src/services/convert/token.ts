/** structs.AccessToken. */
import type { AccessToken } from '../records';
import { fmtTime } from './common';

export function toAccessToken(t: AccessToken, scopes: string[], sha1 = '') {
  return {
    id: t.id,
    name: t.name,
    sha1,
    token_last_eight: t.tokenLastEight,
    scopes,
    created_at: fmtTime(t.createdAt),
    last_used_at: fmtTime(t.lastUsedAt),
  };
}

/** structs.CurrentAccessToken: the token a request was made with, and whose it is. */
export function toCurrentAccessToken(t: AccessToken, scopes: string[], user: { id: number; name: string }) {
  return {
    id: t.id,
    name: t.name,
    scopes,
    created_at: fmtTime(t.createdAt),
    last_used_at: fmtTime(t.lastUsedAt),
    user: { id: user.id, login: user.name },
  };
}
