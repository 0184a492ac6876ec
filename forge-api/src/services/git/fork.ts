/**
 * A fork on disk: a bare clone of its parent that borrows the parent's objects through
 * objects/info/alternates instead of copying them (`git clone --shared`), so forking costs
 * the refs only. The alternates entry is a path relative to the fork's objects folder, so the
 * whole repositories folder can move; when the parent's folder moves (rename, transfer) the
 * entry is rewritten, and before the parent is deleted the fork takes its own copy of every
 * object it needs (repack without --local), so a fork never loses history.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_CONFIG } from './repository';
import { runGit } from './run';
import { repoDiskLock } from './disk-lock';

function alternatesFile(repoPath: string): string {
  return path.join(repoPath, 'objects', 'info', 'alternates');
}

/** The alternates line for a fork that will live at `forkFinalPath`. */
export function alternatesEntry(forkFinalPath: string, parentPath: string): string {
  return path.relative(path.join(forkFinalPath, 'objects'), path.join(parentPath, 'objects'));
}

/**
 * Clones `parentPath` into `stagingPath` (bare, branches and tags, HEAD as the parent's),
 * borrowing objects from the parent; the alternates entry is written for `finalPath`, where
 * the caller moves the clone.
 */
export async function cloneForFork(parentPath: string, stagingPath: string, finalPath: string): Promise<void> {
  await fs.mkdir(path.dirname(stagingPath), { recursive: true });
  await runGit(['clone', '--bare', '--shared', '--quiet', '--no-hardlinks', '--', parentPath, stagingPath]);
  // The parent is not a remote of the fork (Gitea's forks have no origin either).
  await runGit(['--git-dir', stagingPath, 'remote', 'remove', 'origin']).catch(() => undefined);
  await fs.appendFile(path.join(stagingPath, 'config'), REPOSITORY_CONFIG);
  await fs.writeFile(alternatesFile(stagingPath), `${alternatesEntry(finalPath, parentPath)}\n`);
}

/** Points a fork's alternates at its parent's (new) folder. */
export async function relinkFork(forkPath: string, parentPath: string): Promise<void> {
  const file = alternatesFile(forkPath);
  try {
    await fs.access(file);
  } catch {
    return; // a fork that already owns all its objects
  }
  await fs.writeFile(file, `${alternatesEntry(forkPath, parentPath)}\n`);
}

/** Copies every object the fork borrows into its own pack and drops the alternates. */
export async function detachFork(forkPath: string): Promise<void> {
  const file = alternatesFile(forkPath);
  try {
    await fs.access(file);
  } catch {
    return;
  }
  // Not while housekeeping repacks the same fork (disk-lock.ts).
  await repoDiskLock.withMove([forkPath], async () => {
    await runGit(['--git-dir', forkPath, 'repack', '-a', '-d', '-q']);
    await fs.rm(file, { force: true });
  });
}

/** The alternates entries of a repository ([] when it owns all its objects). */
export async function readAlternates(repoPath: string): Promise<string[]> {
  try {
    return (await fs.readFile(alternatesFile(repoPath), 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
