/** structs.Label (repository or organization labels), and the label name and color rules. */
import type { Label } from '../../../generated/prisma/client';
import type { ConvertContext } from './context';
import { repoApiUrl, type RepoWithOwner } from './repository';

/** Label colors are stored "#rrggbb" and shown without '#'. Accepts #rgb, rgb, #rrggbb, rrggbb. */
export function normalizeColor(input: string): string | null {
  const m = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.exec(input.trim());
  if (!m) return null;
  let hex = m[1].toLowerCase();
  if (hex.length === 3) hex = hex.split('').map((c) => c + c).join('');
  return `#${hex}`;
}

/** The scope of a label named "scope/name" ("" when unscoped), as Gitea's Label.ExclusiveScope. */
export function labelScope(name: string): string {
  const i = name.lastIndexOf('/');
  return i <= 0 || i === name.length - 1 ? '' : name.slice(0, i);
}

export function toLabel(c: ConvertContext, l: Label, repo: RepoWithOwner | null, orgName?: string) {
  const url = l.repoId && repo ? `${repoApiUrl(c, repo)}/labels/${l.id}` : `${c.rootUrl}api/v1/orgs/${orgName ?? repo?.owner.name ?? ''}/labels/${l.id}`;
  return {
    id: l.id,
    name: l.name,
    exclusive: l.exclusive,
    is_archived: l.archivedAt !== null,
    color: l.color.replace(/^#/, ''),
    description: l.description,
    url,
  };
}
