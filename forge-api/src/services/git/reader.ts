/**
 * A fast reader of git objects: one long-lived `git cat-file --batch-command` process per
 * repository answers every object look-up of every request, pipelined (requests are written as
 * they come, answers arrive in the same order), so a read costs a line on a pipe instead of a
 * process start (~2 ms each). Git itself parses rev expressions and finds objects in packs,
 * loose files and alternates; we parse the small object formats (commit, tag, tree).
 * The process sees refs and objects written after it started (git re-reads loose refs on every
 * look-up, re-checks packed-refs by stat, and rescans packs on a miss), so it needs no
 * invalidation. That is also why it is not held back by housekeeping's `repack -a -d`
 * (housekeeping.ts), unlike clones: a pack it already opened stays readable after the repack
 * deletes it (git keeps the descriptor), and an object whose loose file or old pack vanished
 * before it was opened is found in the new pack by that rescan; scripts/stress-reader-repack.ts
 * runs look-ups during real repacks and counts the misses. Processes end after a while
 * without use and when the pool is closed.
 *
 * An in-process pack reader was not chosen: it would have to implement delta chains, the
 * multi-pack index, commit-graph and alternates to be correct, and cat-file over a pipe already
 * answers in tens of microseconds.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'child_process';
import { statSync } from 'fs';
import { gitEnv, GitCommandError, runGit } from './run';
import { memoByRefs } from './ref-memo';

export type GitObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface ObjectInfo {
  oid: string;
  type: GitObjectType;
  size: number;
}

export interface GitObject extends ObjectInfo {
  content: Buffer;
}

/** An author, committer or tagger line. `timezone` as git writes it ("+0100"). */
export interface GitIdent {
  name: string;
  email: string;
  when: Date;
  timezone: string;
}

/** A signature and the bytes it signs (the object without its signature). */
export interface GitSignature {
  signature: string;
  payload: string;
}

export interface GitCommit {
  oid: string;
  tree: string;
  parents: string[];
  author: GitIdent;
  committer: GitIdent;
  /** Everything after the header block, as stored (usually ends with "\n"). */
  message: string;
  encoding: string | null;
  signature: GitSignature | null;
}

export interface GitTag {
  oid: string;
  /** The tagged object and its type. */
  object: string;
  objectType: GitObjectType;
  tag: string;
  tagger: GitIdent | null;
  /** The message without a trailing signature block. */
  message: string;
  signature: GitSignature | null;
}

export type TreeEntryType = 'blob' | 'tree' | 'commit';

export interface TreeEntry {
  /** Octal mode as git stores it without leading zeros: 100644, 100755, 120000, 40000, 160000. */
  mode: string;
  type: TreeEntryType;
  oid: string;
  name: string;
}

/** Rev expressions git answers with `fatal` (killing the batch process) or that walk all history. */
function isSafeRev(rev: string): boolean {
  if (!rev || rev.length > 4096 || /[\0\n\r]/.test(rev) || rev.trim() !== rev) return false;
  if (rev.includes('@{') || rev.startsWith(':') || rev.includes('^{/')) return false;
  const colon = rev.indexOf(':');
  if (colon >= 0) {
    const file = rev.slice(colon + 1);
    if (file.split('/').some((part) => part === '.' || part === '..')) return false;
  }
  return true;
}

interface Pending {
  kind: 'info' | 'contents';
  resolve(value: GitObject | ObjectInfo | null): void;
  reject(err: Error): void;
}

const OBJECT_TYPES = new Set(['blob', 'tree', 'commit', 'tag']);

/** Device and inode of a folder (a couple of microseconds, no process), or null when missing. */
function folderIdentity(p: string): string | null {
  try {
    const st = statSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) (\d+)$/;

/** One `git cat-file --batch-command` process and the requests it has yet to answer, in order. */
class BatchProcess {
  readonly proc: ChildProcessWithoutNullStreams;
  pending: Pending[] = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: ObjectInfo | null = null;
  private stderr = '';
  dead = false;

  constructor(readonly identity: string | null, repoPath: string, private readonly onIdle: () => void, private readonly onDead: () => void) {
    this.proc = spawn('git', ['cat-file', '--batch-command'], { cwd: repoPath, env: gitEnv(), stdio: 'pipe' });
    this.proc.stdout.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.drain();
    });
    this.proc.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < 4096) this.stderr += chunk.toString('utf8');
    });
    // A failed spawn (missing folder) or a dying process fails what is waiting; the reader
    // starts a new process for the next request.
    this.proc.on('error', (err) => this.fail(err));
    this.proc.on('close', (code) => this.fail(new GitCommandError(['cat-file', '--batch-command'], code ?? undefined, this.stderr || 'git cat-file ended')));
    this.proc.stdin.on('error', () => undefined); // EPIPE after the process died: reported by 'close'
  }

  send(kind: 'info' | 'contents', rev: string, p: Pending): void {
    this.pending.push(p);
    this.proc.stdin.write(`${kind} ${rev}\n`);
  }

  /** Ends input; git answers what it was sent, then exits. */
  end(): Promise<void> {
    return new Promise((resolve) => {
      if (this.dead) return resolve();
      const kill = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      kill.unref();
      this.proc.once('close', () => {
        clearTimeout(kill);
        resolve();
      });
      this.proc.stdin.end();
    });
  }

  private fail(err: Error): void {
    if (!this.dead) {
      this.dead = true;
      this.onDead();
    }
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) p.reject(err);
  }

  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private consume(n: number): Buffer {
    const buf = this.flatten();
    const out = buf.subarray(0, n);
    const rest = buf.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }

  private drain(): void {
    while (this.pending.length > 0) {
      if (this.header === null) {
        const nl = this.flatten().indexOf(10);
        if (nl < 0) return;
        const line = this.consume(nl + 1).toString('utf8', 0, nl);
        const m = HEADER.exec(line);
        if (!m) {
          // "<rev> missing" or "<rev> ambiguous"
          this.pending.shift()!.resolve(null);
          continue;
        }
        const info: ObjectInfo = { oid: m[1], type: m[2] as GitObjectType, size: Number(m[3]) };
        if (this.pending[0].kind === 'info') {
          this.pending.shift()!.resolve(info);
          continue;
        }
        this.header = info;
      }
      const header = this.header;
      if (this.buffered < header.size + 1) return;
      // A copy, so that a small object does not keep a large read buffer alive.
      const content = Buffer.from(this.consume(header.size + 1).subarray(0, header.size));
      this.header = null;
      this.pending.shift()!.resolve({ ...header, content });
    }
    this.onIdle();
  }
}

/**
 * The object reader of one repository. Calls may be made concurrently; they share one
 * process. The process starts on first use and ends after `idleMs` without requests.
 */
export class GitReader {
  private batch: BatchProcess | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Processes started so far (tests and benches check that reads reuse one). */
  spawned = 0;

  constructor(readonly repoPath: string, private readonly idleMs = 30_000) {}

  /** Type and size of an object, or null when the rev names nothing. */
  info(rev: string): Promise<ObjectInfo | null> {
    return this.request('info', rev) as Promise<ObjectInfo | null>;
  }

  /** Type, size and content of an object, or null when the rev names nothing. */
  read(rev: string): Promise<GitObject | null> {
    return this.request('contents', rev) as Promise<GitObject | null>;
  }

  /** The object id a rev names (no peeling: a tag name gives the tag object), or null. */
  async resolve(rev: string): Promise<string | null> {
    return (await this.info(rev))?.oid ?? null;
  }

  /** The commit a rev names, peeling annotated tags; null when it names no commit. */
  async resolveCommit(rev: string): Promise<string | null> {
    return this.resolve(`${rev}^{commit}`);
  }

  async readCommit(rev: string): Promise<GitCommit | null> {
    const obj = await this.read(rev);
    return obj && obj.type === 'commit' ? parseCommit(obj.oid, obj.content) : null;
  }

  async readTag(rev: string): Promise<GitTag | null> {
    const obj = await this.read(rev);
    return obj && obj.type === 'tag' ? parseTag(obj.oid, obj.content) : null;
  }

  /** Entries of a tree (a tree id, or a commit/tag rev, which is peeled to its tree). */
  async readTree(rev: string): Promise<{ oid: string; entries: TreeEntry[] } | null> {
    let obj = await this.read(rev);
    if (obj && obj.type !== 'tree') obj = await this.read(`${obj.oid}^{tree}`);
    if (!obj || obj.type !== 'tree') return null;
    return { oid: obj.oid, entries: parseTree(obj.content, obj.oid.length / 2) };
  }

  async readBlob(rev: string): Promise<GitObject | null> {
    const obj = await this.read(rev);
    return obj && obj.type === 'blob' ? obj : null;
  }

  /** Several look-ups written at once (one pipe write each, answered in order). */
  infos(revs: readonly string[]): Promise<(ObjectInfo | null)[]> {
    return Promise.all(revs.map((r) => this.info(r)));
  }

  readCommits(revs: readonly string[]): Promise<(GitCommit | null)[]> {
    return Promise.all(revs.map((r) => this.readCommit(r)));
  }

  /** Ends the process (requests already sent still get their answers); the next call starts another. */
  close(): Promise<void> {
    this.clearIdle();
    const batch = this.batch;
    this.batch = null;
    return batch ? batch.end() : Promise.resolve();
  }

  /** Whether a process is running (for tests). */
  get running(): boolean {
    return this.batch !== null;
  }

  private request(kind: 'info' | 'contents', rev: string): Promise<GitObject | ObjectInfo | null> {
    if (!isSafeRev(rev)) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.clearIdle();
      // A repository folder deleted, moved or replaced since the process started: that
      // process still holds the old folder's packs, so it must not answer for the new one.
      const identity = folderIdentity(this.repoPath);
      if (this.batch && this.batch.identity !== identity) {
        void this.batch.end();
        this.batch = null;
      }
      if (!this.batch) {
        const batch: BatchProcess = new BatchProcess(
          identity,
          this.repoPath,
          () => {
            if (this.batch === batch) this.armIdle();
          },
          () => {
            if (this.batch === batch) this.batch = null;
          },
        );
        this.batch = batch;
        this.spawned += 1;
      }
      this.batch.send(kind, rev, { kind, resolve, reject });
    });
  }

  private armIdle(): void {
    this.clearIdle();
    this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
    this.idleTimer.unref();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

export interface GitReaderPoolOptions {
  /** A repository's process ends after this long without requests. */
  idleMs?: number;
  /** At most this many repositories keep a reader; the least recently used one is closed. */
  maxReaders?: number;
}

/** One GitReader per repository path, shared by all requests of the app. */
export class GitReaderPool {
  private readers = new Map<string, GitReader>();
  private readonly idleMs: number;
  private readonly maxReaders: number;

  constructor(options: GitReaderPoolOptions = {}) {
    this.idleMs = options.idleMs ?? 30_000;
    this.maxReaders = options.maxReaders ?? 64;
  }

  reader(repoPath: string): GitReader {
    let r = this.readers.get(repoPath);
    if (r) {
      // Map order is the recency order.
      this.readers.delete(repoPath);
      this.readers.set(repoPath, r);
      return r;
    }
    r = new GitReader(repoPath, this.idleMs);
    this.readers.set(repoPath, r);
    if (this.readers.size > this.maxReaders) {
      const [oldest, reader] = this.readers.entries().next().value as [string, GitReader];
      this.readers.delete(oldest);
      void reader.close();
    }
    return r;
  }

  /** Ends the process of one repository (before it is deleted or moved on disk). */
  async forget(repoPath: string): Promise<void> {
    const r = this.readers.get(repoPath);
    this.readers.delete(repoPath);
    if (r) await r.close();
  }

  async close(): Promise<void> {
    const all = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(all.map((r) => r.close()));
  }
}

// ---------------------------------------------------------------------------------------------
// Object formats

function parseIdent(value: string): GitIdent {
  const lt = value.indexOf('<');
  const gt = value.lastIndexOf('>');
  if (lt < 0 || gt < lt) return { name: value.trim(), email: '', when: new Date(0), timezone: '+0000' };
  const name = value.slice(0, lt).trim();
  const email = value.slice(lt + 1, gt);
  const [secs, tz] = value.slice(gt + 1).trim().split(' ');
  const n = Number(secs);
  return { name, email, when: new Date(Number.isFinite(n) ? n * 1000 : 0), timezone: /^[+-]\d{4}$/.test(tz ?? '') ? tz : '+0000' };
}

interface Header {
  key: string;
  value: string;
  /** The header's lines as stored (with continuation lines), for signature payloads. */
  raw: string;
}

/** Splits an object into header fields (continuation lines start with a space) and message. */
function splitObject(text: string): { headers: Header[]; message: string } {
  const end = text.indexOf('\n\n');
  const head = end < 0 ? text : text.slice(0, end);
  const message = end < 0 ? '' : text.slice(end + 2);
  const headers: Header[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith(' ') && headers.length > 0) {
      const h = headers[headers.length - 1];
      h.value += `\n${line.slice(1)}`;
      h.raw += `\n${line}`;
      continue;
    }
    const sp = line.indexOf(' ');
    headers.push(sp < 0 ? { key: line, value: '', raw: line } : { key: line.slice(0, sp), value: line.slice(sp + 1), raw: line });
  }
  return { headers, message };
}

export function parseCommit(oid: string, content: Buffer): GitCommit {
  const { headers, message } = splitObject(content.toString('utf8'));
  const commit: GitCommit = {
    oid,
    tree: '',
    parents: [],
    author: parseIdent(''),
    committer: parseIdent(''),
    message,
    encoding: null,
    signature: null,
  };
  const unsigned: string[] = [];
  for (const h of headers) {
    if (h.key === 'gpgsig' || h.key === 'gpgsig-sha256') {
      commit.signature = { signature: `${h.value}\n`.replace(/\n+$/, '\n'), payload: '' };
      continue;
    }
    unsigned.push(h.raw);
    if (h.key === 'tree') commit.tree = h.value;
    else if (h.key === 'parent') commit.parents.push(h.value);
    else if (h.key === 'author') commit.author = parseIdent(h.value);
    else if (h.key === 'committer') commit.committer = parseIdent(h.value);
    else if (h.key === 'encoding') commit.encoding = h.value;
  }
  if (commit.signature) commit.signature.payload = `${unsigned.join('\n')}\n\n${message}`;
  return commit;
}

const SIGNATURE_STARTS = ['-----BEGIN PGP SIGNATURE-----', '-----BEGIN SSH SIGNATURE-----', '-----BEGIN SIGNED MESSAGE-----'];

export function parseTag(oid: string, content: Buffer): GitTag {
  const text = content.toString('utf8');
  const { headers, message } = splitObject(text);
  const tag: GitTag = { oid, object: '', objectType: 'commit', tag: '', tagger: null, message, signature: null };
  for (const h of headers) {
    if (h.key === 'object') tag.object = h.value;
    else if (h.key === 'type' && OBJECT_TYPES.has(h.value)) tag.objectType = h.value as GitObjectType;
    else if (h.key === 'tag') tag.tag = h.value;
    else if (h.key === 'tagger') tag.tagger = parseIdent(h.value);
  }
  // A signed tag carries its signature at the end of the message; the payload is what precedes it.
  let at = -1;
  for (const start of SIGNATURE_STARTS) {
    const i = message.lastIndexOf(start);
    if (i >= 0 && (i === 0 || message[i - 1] === '\n') && i > at) at = i;
  }
  if (at >= 0) {
    const bodyStart = text.length - message.length;
    tag.signature = { signature: message.slice(at), payload: text.slice(0, bodyStart + at) };
    tag.message = message.slice(0, at);
  }
  return tag;
}

export function parseTree(content: Buffer, hashBytes = 20): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const sp = content.indexOf(32, i);
    const nul = content.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + hashBytes > content.length) break;
    const mode = content.toString('latin1', i, sp);
    const name = content.toString('utf8', sp + 1, nul);
    const oid = content.toString('hex', nul + 1, nul + 1 + hashBytes);
    const type: TreeEntryType = mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
    entries.push({ mode, type, oid, name });
    i = nul + 1 + hashBytes;
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Refs and history (one short git process each: these walk many objects)

export interface GitRef {
  /** Full name: refs/heads/main, refs/tags/v1, ... */
  name: string;
  oid: string;
  type: GitObjectType;
  /** For an annotated tag, the object it finally points at (and its type); else null. */
  peeled: string | null;
  peeledType: GitObjectType | null;
}

/**
 * Refs whose full name starts with `prefix` as a string ("refs/heads/ma" matches
 * refs/heads/main), sorted by name. One `git for-each-ref` limited to the prefix's folder, kept
 * until a ref changes (ref-memo.ts).
 */
export async function listRefs(repoPath: string, prefix = 'refs/'): Promise<GitRef[]> {
  if (/[\0\n]/.test(prefix)) return [];
  const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/') + 1) : '';
  const args = ['for-each-ref', '--format=%(objectname) %(objecttype) %(*objectname) %(*objecttype) %(refname)'];
  // for-each-ref matches whole path components; the rest of the prefix is matched here.
  if (folder) args.push('--end-of-options', folder);
  const out = await memoByRefs(repoPath, `listRefs\0${folder}`, () => runGit(args, { cwd: repoPath }));
  const refs: GitRef[] = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [oid, type, peeled, peeledType, ...rest] = line.split(' ');
    const name = rest.join(' ');
    if (!name.startsWith(prefix)) continue;
    refs.push({
      name,
      oid,
      type: type as GitObjectType,
      peeled: peeled || null,
      peeledType: (peeledType || null) as GitObjectType | null,
    });
  }
  return refs;
}

export interface LogOptions {
  /** Revisions to start from (commit ids or ref names); checked by the caller. */
  revs: string[];
  /** Commits reachable from these are left out (`--not`). */
  not?: string[];
  /** Only commits touching one of these paths. */
  paths?: string[];
  since?: Date;
  until?: Date;
  skip?: number;
  limit?: number;
  firstParent?: boolean;
}

function revListArgs(o: LogOptions): string[] {
  const args: string[] = [];
  if (o.since) args.push(`--since=${Math.floor(o.since.getTime() / 1000)}`);
  if (o.until) args.push(`--until=${Math.floor(o.until.getTime() / 1000)}`);
  if (o.firstParent) args.push('--first-parent');
  // After --end-of-options nothing is an option, so exclusions are written as ^rev.
  args.push('--end-of-options', ...o.revs, ...(o.not ?? []).map((r) => `^${r}`));
  args.push('--');
  if (o.paths) args.push(...o.paths);
  return args;
}

/** Commit ids of one page of history, newest first (git's order), paged by git itself. */
export async function logCommitIds(repoPath: string, o: LogOptions): Promise<string[]> {
  // Paths are file names, never pathspec magic (":(glob)..." from a query string).
  const args = ['--literal-pathspecs', 'rev-list'];
  if (o.skip && o.skip > 0) args.push(`--skip=${o.skip}`);
  if (o.limit !== undefined) args.push(`--max-count=${o.limit}`);
  const out = await runGit([...args, ...revListArgs(o)], { cwd: repoPath });
  return out.split('\n').filter(Boolean);
}

/** How many commits the same walk finds (`rev-list --count`). */
export async function countCommits(repoPath: string, o: LogOptions): Promise<number> {
  const out = await runGit(['--literal-pathspecs', 'rev-list', '--count', ...revListArgs(o)], { cwd: repoPath });
  return Number(out.trim()) || 0;
}

/**
 * One page of history as parsed commits: the ids from rev-list, the objects from the reader.
 */
export async function logCommits(reader: GitReader, o: LogOptions): Promise<GitCommit[]> {
  const ids = await logCommitIds(reader.repoPath, o);
  const commits = await reader.readCommits(ids);
  return commits.filter((c): c is GitCommit => c !== null);
}
