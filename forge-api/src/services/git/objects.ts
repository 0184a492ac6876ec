/**
 * Writing git objects and refs straight into a bare repository (SHA-1 object format), for the
 * one commit of auto_init and the blobs of the forge's own commits (commit-writer.ts): no
 * process per object, which makes repository creation with README/LICENSE/.gitignore cost one
 * `git init` in total. The formats are git's documented loose-object and ref-file formats; tests
 * check the result with `git fsck --strict`.
 */
import { createHash } from 'crypto';
import { promises as fs } from 'fs';
import path from 'path';
import zlib from 'zlib';

export type ObjectType = 'blob' | 'tree' | 'commit';

export function objectId(type: ObjectType, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Attempts at writing a temporary file whose folder keeps vanishing (see writeAtomic). */
const FOLDER_ATTEMPTS = 5;

/**
 * Writes `file` as a temporary file in its folder renamed onto it. The folder can vanish between
 * being made and being written to: `git repack -d` (housekeeping.ts, which does not wait for
 * the forge's own commits) ends with prune-packed, which removes every object folder it finds
 * empty, and a ref deletion removes emptied folders under refs/. So, as git's own object writer
 * does, a write that finds its folder missing makes it and tries again (a few times at most: each
 * prune-packed removes a folder once); once the temporary file is in, the folder is no longer
 * empty and stays until the rename.
 */
async function writeAtomic(file: string, data: Buffer | string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.writeFile(tmp, data, { mode: 0o444 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= FOLDER_ATTEMPTS) throw err;
      await fs.mkdir(path.dirname(file), { recursive: true });
    }
  }
  await fs.rename(tmp, file);
}

/** Stores a loose object and returns its id. */
export async function writeObject(repoPath: string, type: ObjectType, content: Buffer): Promise<string> {
  const id = objectId(type, content);
  const file = path.join(repoPath, 'objects', id.slice(0, 2), id.slice(2));
  const raw = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
  await writeAtomic(file, zlib.deflateSync(raw));
  return id;
}

export interface TreeEntry {
  name: string;
  blobId: string;
}

/** A tree of regular files (mode 100644) at one level, sorted by name as git requires. */
export function treeContent(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  return Buffer.concat(sorted.map((e) => Buffer.concat([Buffer.from(`100644 ${e.name}\0`), Buffer.from(e.blobId, 'hex')])));
}

export interface Identity {
  name: string;
  email: string;
  when: Date;
}

function ident(i: Identity): string {
  const clean = (s: string) => s.replace(/[<>\n\0]/g, '').trim();
  return `${clean(i.name)} <${clean(i.email)}> ${Math.floor(i.when.getTime() / 1000)} +0000`;
}

export function commitContent(treeId: string, author: Identity, committer: Identity, message: string, parents: string[] = []): Buffer {
  const lines = [`tree ${treeId}`, ...parents.map((p) => `parent ${p}`), `author ${ident(author)}`, `committer ${ident(committer)}`];
  return Buffer.from(`${lines.join('\n')}\n\n${message}`);
}

/** Points refs/heads/<branch> at a commit (the ref file git itself would write). */
export async function writeBranchRef(repoPath: string, branch: string, commitId: string): Promise<void> {
  await writeAtomic(path.join(repoPath, 'refs', 'heads', ...branch.split('/')), `${commitId}\n`);
}
