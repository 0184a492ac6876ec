/** Small formatting rules shared by the git data records (dates and URLs as Gitea writes them). */
import type { GitIdent } from '../git/reader';
import type { RepoWithOwner } from '../convert/repository';

/**
 * A git date in RFC 3339 with the offset it was recorded with, as Go formats a time.Time in a
 * fixed zone: "2024-01-02T11:00:00-05:00", and "Z" for a zero offset.
 */
export function gitDate(ident: Pick<GitIdent, 'when' | 'timezone'>): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(ident.timezone);
  const minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = new Date(ident.when.getTime() + minutes * 60_000);
  const base = local.toISOString().replace(/\.\d{3}Z$/, '');
  if (minutes === 0) return `${base}Z`;
  const abs = Math.abs(minutes);
  return `${base}${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Go's zero time, which Gitea sends where it leaves a date unset. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

export interface RepoUrls {
  /** https://host/api/v1/repos/owner/name */
  api: string;
  /** https://host/owner/name */
  html: string;
}

export function repoUrls(rootUrl: string, repo: Pick<RepoWithOwner, 'name' | 'owner'>): RepoUrls {
  const full = `${repo.owner.name}/${repo.name}`;
  return { api: `${rootUrl}api/v1/repos/${full}`, html: `${rootUrl}${full}` };
}

/** Each segment escaped, slashes kept (Gitea's util.PathEscapeSegments). */
export function escapeSegments(p: string): string {
  return p.split('/').map(goPathEscape).join('/');
}

/** Go's url.PathEscape: like encodeURIComponent, but a few more characters stay as they are. */
export function goPathEscape(s: string): string {
  return encodeURIComponent(s).replace(/%(24|26|2B|2C|3A|3B|3D|40)/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}
