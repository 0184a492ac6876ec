/** structs.Release and its assets (Gitea's convert.ToAPIRelease). */
import type { Attachment, Release } from '../../../generated/prisma/client';
import { toAttachment } from './attachment';
import { fmtTime } from './common';
import type { ConvertContext } from './context';
import type { RepoWithOwner } from './repository';
import { userPublic } from './user';
import type { User } from '../records';

/** Go's url.PathEscape of one segment. */
function pathEscape(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** util.PathEscapeSegments: each `/`-separated part escaped. */
function escapeSegments(s: string): string {
  return s.split('/').map(pathEscape).join('/');
}

/**
 * A release's assets as Gitea lists them: by name, downloadable by name under the release's
 * tag when the names are unique (else by uuid, as a lone asset's own JSON always is).
 */
export function toReleaseAssets(c: ConvertContext, repo: RepoWithOwner, rel: Pick<Release, 'tagName'>, assets: Attachment[]) {
  const sorted = [...assets].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  const unique = new Set(sorted.map((a) => a.name)).size === sorted.length;
  const base = `${c.rootUrl}${repo.owner.name}/${repo.name}/releases/download/${pathEscape(rel.tagName)}/`;
  return sorted.map((a) => ({ ...toAttachment(c, a), ...(unique ? { browser_download_url: base + pathEscape(a.name) } : {}) }));
}

export function toRelease(c: ConvertContext, repo: RepoWithOwner, rel: Release, publisher: User, assets: Attachment[]) {
  const html = `${c.rootUrl}${repo.owner.name}/${repo.name}`;
  const api = `${c.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}/releases/${rel.id}`;
  const tag = escapeSegments(rel.tagName);
  return {
    id: rel.id,
    tag_name: rel.tagName,
    target_commitish: rel.target,
    name: rel.title,
    body: rel.note,
    url: api,
    html_url: `${html}/releases/tag/${tag}`,
    tarball_url: `${html}/archive/${tag}.tar.gz`,
    zipball_url: `${html}/archive/${tag}.zip`,
    upload_url: `${api}/assets`,
    draft: rel.isDraft,
    prerelease: rel.isPrerelease,
    created_at: fmtTime(rel.createdAt),
    published_at: fmtTime(rel.createdAt),
    author: userPublic(c, publisher),
    assets: toReleaseAssets(c, repo, rel, assets),
  };
}
