/**
 * Repository creation that a crash cannot leave half-made.
 *
 * The git repository is built completely (bare init, initial commit for auto_init) in a
 * staging folder first; then a marker naming the final path is written, the folder is
 * renamed into place and the database row is committed; the marker goes last. A crash
 * leaves one of:
 *   - a staging folder: never visible, removed at start-up;
 *   - a marker whose repository has no row (the crash came between the rename and the
 *     commit): the folder is removed at start-up, so the client's retry creates it again;
 *   - a marker whose repository has its row: complete, only the marker is removed.
 * A row therefore always has its complete repository on disk, and a retry never meets
 * "already exists" for a repository that was never finished.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

const ROOT = '.portcullis-creating';

export interface CreationPaths {
  /** Where the repository is built. */
  staging: string;
  /** The marker recording the final path while the row is not yet committed. */
  marker: string;
}

export function creationRoot(reposDir: string): string {
  return path.join(reposDir, ROOT);
}

/** A fresh staging path and marker for one creation. */
export async function beginCreation(reposDir: string): Promise<CreationPaths> {
  const id = crypto.randomUUID();
  const root = creationRoot(reposDir);
  await fs.mkdir(path.join(root, 'staging'), { recursive: true });
  await fs.mkdir(path.join(root, 'markers'), { recursive: true });
  return { staging: path.join(root, 'staging', `${id}.git`), marker: path.join(root, 'markers', id) };
}

/** Records that `finalPath` is being moved into place and is not committed yet. */
export async function markPending(paths: CreationPaths, finalPath: string): Promise<void> {
  const tmp = `${paths.marker}.tmp`;
  const fh = await fs.open(tmp, 'w');
  try {
    await fh.writeFile(finalPath);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, paths.marker);
}

export async function endCreation(paths: CreationPaths): Promise<void> {
  await fs.rm(paths.marker, { force: true });
  await fs.rm(paths.staging, { recursive: true, force: true });
}

/**
 * Start-up recovery: staging folders go; a pending final path is removed unless `committed`
 * says its row exists. Returns the final paths that were removed.
 */
export async function recoverCreations(reposDir: string, committed: (finalPath: string) => Promise<boolean>): Promise<string[]> {
  const root = creationRoot(reposDir);
  const removed: string[] = [];
  let markers: string[] = [];
  try {
    markers = await fs.readdir(path.join(root, 'markers'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return removed;
    throw err;
  }
  for (const name of markers) {
    const marker = path.join(root, 'markers', name);
    if (name.endsWith('.tmp')) {
      await fs.rm(marker, { force: true });
      continue;
    }
    const finalPath = (await fs.readFile(marker, 'utf8')).trim();
    // Only paths inside the repositories folder are ever written to a marker.
    if (finalPath && path.resolve(finalPath).startsWith(path.resolve(reposDir) + path.sep) && !(await committed(finalPath))) {
      await fs.rm(finalPath, { recursive: true, force: true });
      removed.push(finalPath);
    }
    await fs.rm(marker, { force: true });
  }
  await fs.rm(path.join(root, 'staging'), { recursive: true, force: true });
  return removed;
}
