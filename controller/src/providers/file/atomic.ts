import { promises as fs } from 'fs';
import * as path from 'path';

let counter = 0;

/**
 * Replace a file so a reader sees either the old or the new content, never half of it:
 * write a sibling temp file, fsync it, rename it over the target (rename is atomic on POSIX
 * within one file system). fsync makes the new content survive a power loss; a file that is
 * rewritten on every reconcile anyway may skip it (readers still never see half a file).
 */
export async function writeFileAtomic(file: string, content: string, options: { fsync?: boolean } = {}): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${++counter}.tmp`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(tmp, 'w');
  } catch (err) {
    // The folder is nearly always there: create it only when it is not (a mkdir per write
    // showed up in the status phase of every reconcile).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fs.mkdir(dir, { recursive: true });
    handle = await fs.open(tmp, 'w');
  }
  try {
    await handle.writeFile(content, 'utf8');
    if (options.fsync !== false) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** Reads a file, or undefined when it does not exist. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
