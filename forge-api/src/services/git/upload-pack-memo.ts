/**
 * The answers of `git upload-pack` that depend only on a repository's refs, kept until they
 * change: the smart-HTTP advertisement (GET info/refs) and, for protocol v2 clients, the
 * `ls-refs` command. A v2 clone is three HTTP requests (advertisement, ls-refs, fetch); only
 * the fetch needs git to build a pack.
 *
 * Why: spawning git from the forge's large Node process costs several milliseconds of CPU on
 * each side of the fork (the page tables of the whole process are copied, then torn down), more
 * than git's own work for these two small answers; Gitea's Go runtime spawns without that cost.
 *
 * What the kept bytes depend on, and how a change is seen:
 * - the refs (the advertisement of protocol v0/v1 and ls-refs list them): memoByRefs;
 * - HEAD (its symref target), config (uploadpack.*, hidden refs, the capabilities v2
 *   announces) and shallow (shallow lines): (inode, size, mtime) of each file, part of the key;
 *   a file changed in the last RACY_MS is not trusted (two writes may share one mtime tick);
 * - the request: the Git-Protocol value and, for ls-refs, the whole request body (ref
 *   prefixes, peel, symrefs, unborn).
 * Objects never change under an id, so peeled tags stay true.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { memoByRefs } from './ref-memo';

const RACY_MS = 50;
/** Larger answers (repositories with very many refs) are recomputed each time rather than kept. */
const MAX_KEPT_BYTES = 256 * 1024;
/** ls-refs requests are a few hundred bytes; anything larger is not a request worth keeping. */
export const MAX_LS_REFS_REQUEST = 16 * 1024;

function fileSig(file: string): string | null {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(file, { bigint: true });
  } catch {
    return '-';
  }
  if (Date.now() - Number(st.mtimeNs / 1_000_000n) < RACY_MS) return null;
  return `${st.ino}:${st.size}:${st.mtimeNs}`;
}

/** The signature of HEAD, config and shallow, or null when one of them is too fresh to trust. */
function repoFilesSig(repoPath: string): string | null {
  const parts: string[] = [];
  for (const name of ['HEAD', 'config', 'shallow']) {
    const sig = fileSig(path.join(repoPath, name));
    if (sig === null) return null;
    parts.push(sig);
  }
  return parts.join('/');
}

const keep = (b: Buffer) => b.length <= MAX_KEPT_BYTES;

/** GET info/refs?service=git-upload-pack: git's answer for this Git-Protocol value. */
export function uploadPackAdvertisement(repoPath: string, protocol: string, compute: () => Promise<Buffer>): Promise<Buffer> {
  const files = repoFilesSig(repoPath);
  if (files === null) return compute();
  return memoByRefs(repoPath, `upload-pack-advertisement\0${protocol}\0${files}`, compute, { keep });
}

/** Is this stateless-rpc request body a protocol v2 `ls-refs` command? */
export function isLsRefsRequest(body: Buffer): boolean {
  // The first pkt-line: 4 hex digits of length, then "command=ls-refs" and a newline or not.
  if (body.length < 4 + 'command=ls-refs'.length) return false;
  const len = parseInt(body.subarray(0, 4).toString('latin1'), 16);
  if (!Number.isFinite(len) || len < 4 || len > body.length) return false;
  const line = body.subarray(4, len).toString('latin1').replace(/\n$/, '');
  return line === 'command=ls-refs';
}

/** POST git-upload-pack carrying an ls-refs command: git's answer for exactly this request. */
export function lsRefsAnswer(repoPath: string, protocol: string, body: Buffer, compute: () => Promise<Buffer>): Promise<Buffer> {
  const files = repoFilesSig(repoPath);
  if (files === null) return compute();
  const digest = crypto.createHash('sha256').update(body).digest('hex');
  return memoByRefs(repoPath, `ls-refs\0${protocol}\0${files}\0${digest}`, compute, { keep });
}
