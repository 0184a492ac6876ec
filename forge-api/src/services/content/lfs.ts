/**
 * Git LFS pointer files (the spec's v1 text format), recognised the way Gitea's lfs.ReadPointer
 * does. The forge has no LFS object store: a pointer is shown as its oid and size in the contents
 * API and served as the pointer text itself by /media, as Gitea does for a pointer whose object
 * it does not hold.
 */

/** Pointer files are at most this many bytes (Gitea's lfs.MetaFileMaxSize). */
export const LFS_POINTER_MAX = 1024;

const VERSION_LINE = 'version https://git-lfs.github.com/spec/v1';

export function parseLfsPointer(data: Buffer): { oid: string; size: number } | null {
  if (data.length > LFS_POINTER_MAX) return null;
  const text = data.toString('utf8');
  if (!text.startsWith(`${VERSION_LINE}\n`)) return null;
  const lines = text.split('\n');
  let oid = '';
  let size = -1;
  for (const line of lines.slice(1)) {
    const m = /^oid sha256:([0-9a-f]{64})$/.exec(line);
    if (m) oid = m[1];
    const s = /^size (\d+)$/.exec(line);
    if (s) size = Number(s[1]);
  }
  return oid && size >= 0 ? { oid, size } : null;
}
