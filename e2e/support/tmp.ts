import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';

/** A fresh directory under the OS temp dir; remove it with removeDir. */
export async function makeTempDir(prefix = 'portcullis-e2e-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
}
