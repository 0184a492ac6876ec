/**
 * The records of `git ls-tree -z` (with or without `-l`): `<mode> <type> <oid>[ <size>]\t<path>`
 * separated by NUL. With `-l` git pads the size column with spaces, hence the split on runs of
 * spaces; trees and commits have `-` as size, which reads as undefined.
 */
export interface LsTreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
  /** Only with `-l`, and only for blobs. */
  size?: number;
}

export function parseLsTree(out: string): LsTreeEntry[] {
  const entries: LsTreeEntry[] = [];
  for (const line of out.split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, oid, size] = line.slice(0, tab).split(/ +/);
    const sized = size !== undefined && size !== '-' ? Number(size) : undefined;
    entries.push({ mode, type, oid, path: line.slice(tab + 1), size: Number.isFinite(sized) ? sized : undefined });
  }
  return entries;
}
