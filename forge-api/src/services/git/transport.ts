/**
 * The git side of every transport (smart HTTP, SSH): spawns `git upload-pack`, `receive-pack`
 * or `upload-archive` for a repository, and for a push serves the pre-receive hook that asks
 * the forge whether the ref updates may go in. The transports only move bytes and decide who
 * may call which service; the push rules are the same whichever way a push arrives.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { gitEnv } from './run';
import type { RepoHousekeeping } from './housekeeping';
import { GitSpawner, type GitProcess } from './spawner';
import { serveProcReceive, type ProcReceiveHandler } from './proc-receive';

export type GitServiceName = 'upload-pack' | 'receive-pack' | 'upload-archive';

/** One line git gives a pre-receive hook: `<old> <new> <ref>`. */
export interface PushedRefUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

/**
 * Decides a push: the refusal the git client must see, or null to let the ref updates in.
 * `env` reaches the objects of the incoming pack (git's quarantine directory).
 */
export type PushCheck = (updates: PushedRefUpdate[], env: Record<string, string>) => Promise<string | null>;

export interface GitServiceOptions {
  /** Smart HTTP: one request, one response (`--stateless-rpc`). */
  statelessRpc?: boolean;
  /** Smart HTTP's GET .../info/refs: only the ref advertisement. */
  advertiseRefs?: boolean;
  /** Added to git's isolated environment (GIT_PROTOCOL, the GITEA_* variables). */
  env?: Record<string, string>;
  /** For receive-pack: the forge's verdict on the ref updates; without it every push is refused. */
  checkPush?: PushCheck;
  /** A checkPush that threw: the push is refused with Gitea's generic text, the error reported here. */
  onCheckError?(err: unknown): void;
  /**
   * For receive-pack: takes the refs/for/* updates of a push (AGit pull requests) instead of
   * letting git store them as refs; without it such refs are stored like any other.
   */
  procReceive?: ProcReceiveHandler;
  /**
   * For receive-pack: after the refs changed, the text the client is shown (`remote:` lines) for
   * the ref updates that went in, as Gitea's post-receive hook prints it; '' shows nothing.
   */
  postReceive?: PostReceiveHandler;
}

/** The message a push's client sees once its ref updates went in. */
export type PostReceiveHandler = (updates: PushedRefUpdate[]) => Promise<string>;

/**
 * The pre-receive hook every push runs (git -c core.hooksPath=<dir>). It does not decide
 * anything: it hands git's ref updates and its object environment to the forge process that
 * started this receive-pack, through two pipes the forge opened for it (fd 3 to the forge, fd 4
 * back), and prints the forge's refusal the way Gitea's hook does. The pipes, rather than a
 * call back over HTTP, tie the verdict to exactly the push that started git, need no internal
 * token or listening port, and fail closed: without them the hook refuses the push.
 */
const PRE_RECEIVE = `#!/bin/sh
{
  printf 'env GIT_OBJECT_DIRECTORY %s\\n' "$GIT_OBJECT_DIRECTORY"
  printf 'env GIT_ALTERNATE_OBJECT_DIRECTORIES %s\\n' "$GIT_ALTERNATE_OBJECT_DIRECTORIES"
  printf 'env GIT_QUARANTINE_PATH %s\\n' "$GIT_QUARANTINE_PATH"
  while read -r old new ref; do printf 'update %s %s %s\\n' "$old" "$new" "$ref"; done
  echo end
} >&3 || exit 1
IFS= read -r verdict <&4 || exit 1
[ "$verdict" = ok ] && exit 0
echo
printf 'error:\\nerror: %s\\nerror:\\n' "\${verdict#deny }" >&2
exit 1
`;

/**
 * The proc-receive hook: a relay between git and the forge over three more pipes the forge
 * opened (fd 5: git's packets to the forge; fd 6: the forge's answer; fd 7: the message the
 * client sees), for the same reasons as the pre-receive hook's pipes. The answer ends before
 * the message, so git has read its report by the time the message is printed.
 */
const PROC_RECEIVE = `#!/bin/sh
# A background command reads /dev/null unless given another input: git's packets through fd 9.
exec 9<&0
cat <&9 >&5 &
exec 9<&-
cat <&6 || exit 1
cat <&7 >&2
`;

/**
 * The post-receive hook: hands the ref updates that went in to the forge (fd 8) and prints what
 * the forge answers (fd 9) to the client, the way Gitea's post-receive hook prints its pull
 * request hints. Without the pipes it prints nothing: the push already happened.
 */
const POST_RECEIVE = `#!/bin/sh
{ cat; echo end; } >&8 2>/dev/null || exit 0
cat <&9 >&2 2>/dev/null
exit 0
`;

/** The refs an AGit push names (Gitea's refs/for/<base>[/<topic>]). */
export const PROC_RECEIVE_REFS = 'refs/for';

export const INTERNAL_ERROR_MESSAGE = 'Internal Server Error (no specific error)';

export class GitTransport {
  private hooks: string | null = null;

  /**
   * `housekeeping` hears of every push this transport runs (it plans a repack after the last
   * one). `spawner` runs smart HTTP's upload-pack (the git command of every clone and fetch)
   * from a small helper process instead of forking the forge (spawner.ts); null: always fork.
   */
  constructor(
    private readonly housekeeping?: RepoHousekeeping,
    private readonly spawner: GitSpawner | null = new GitSpawner(),
  ) {}

  /** The folder holding the forge's hooks, written on the first push of this process. */
  private hooksDir(): string {
    if (this.hooks && ['pre-receive', 'proc-receive', 'post-receive'].every((hook) => fs.existsSync(path.join(this.hooks!, hook)))) return this.hooks;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-hooks-'));
    fs.writeFileSync(path.join(dir, 'pre-receive'), PRE_RECEIVE, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'proc-receive'), PROC_RECEIVE, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'post-receive'), POST_RECEIVE, { mode: 0o755 });
    this.hooks = dir;
    return dir;
  }

  /**
   * Runs one git service on `repoPath`; the caller pipes its stdin/stdout/stderr. A service that
   * reads the object store for its client (a clone or fetch's upload-pack, upload-archive)
   * starts once no repack of the repository runs (housekeeping.ts): a repack deletes the packs
   * it replaced under a reader that listed them.
   */
  async spawn(service: GitServiceName, repoPath: string, opts: GitServiceOptions = {}): Promise<GitProcess> {
    const args: string[] = [];
    const isPush = service === 'receive-pack' && !opts.advertiseRefs;
    if (isPush) args.push('-c', `core.hooksPath=${this.hooksDir()}`);
    // Push options reach the proc-receive hook (AGit's topic, title, description, force-push);
    // the advertisement must announce them or git refuses `git push -o`.
    if (service === 'receive-pack' && opts.procReceive) args.push('-c', 'receive.advertisePushOptions=true', '-c', `receive.procReceiveRefs=${PROC_RECEIVE_REFS}`);
    args.push(service);
    if (opts.statelessRpc) args.push('--stateless-rpc');
    if (opts.advertiseRefs) args.push('--advertise-refs');
    args.push(repoPath);
    // Its stderr is only logged, so it may arrive at the end (SSH relays it as it comes).
    const env = gitEnv(opts.env ?? {});
    if (!isPush) {
      // The advertisement reads refs only; receive-pack's is the same (a push is no read here).
      const reads = service !== 'receive-pack' && !opts.advertiseRefs && this.housekeeping ? await this.housekeeping.startRead(repoPath) : null;
      const child = service === 'upload-pack' && opts.statelessRpc && this.spawner ? this.spawner.spawn(args, opts.env ?? {}) : spawn('git', args, { env });
      reads?.(child);
      return child;
    }
    const child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] }) as unknown as ChildProcessWithoutNullStreams;
    const housekeeping = this.housekeeping;
    if (housekeeping) {
      housekeeping.pushStarted(repoPath);
      let ended = false;
      const end = () => {
        if (!ended) housekeeping.pushEnded(repoPath);
        ended = true;
      };
      child.on('close', end);
      child.on('error', end);
    }
    const onError = opts.onCheckError ?? (() => undefined);
    serveHook(child, opts.checkPush ?? (async () => INTERNAL_ERROR_MESSAGE), onError);
    const [fromProc, toProc, toClient] = (child.stdio as unknown as unknown[]).slice(5, 8) as [Readable, Writable, Writable];
    for (const s of [fromProc, toProc, toClient]) s.on('error', () => undefined);
    if (opts.procReceive) void serveProcReceive(fromProc, toProc, toClient, opts.procReceive, onError, INTERNAL_ERROR_MESSAGE);
    else {
      toProc.end();
      toClient.end();
    }
    servePostReceive(child, opts.postReceive, onError);
    return child;
  }

  /** Starts the git helper process ahead of the first clone. */
  async warm(): Promise<void> {
    await this.spawner?.warm();
  }

  async close(): Promise<void> {
    if (this.hooks) fs.rmSync(this.hooks, { recursive: true, force: true });
    this.hooks = null;
    await this.spawner?.close();
  }
}

/**
 * Answers the post-receive hook of one receive-pack: reads git's `<old> <new> <ref>` lines from
 * fd 8 until `end`, writes the handler's message to fd 9. A failing handler shows nothing.
 */
function servePostReceive(child: ChildProcess, handler: PostReceiveHandler | undefined, onError: (err: unknown) => void): void {
  const [fromHook, toHook] = (child.stdio as unknown as (Readable | Writable | null)[]).slice(8, 10) as [Readable | null, Writable | null];
  if (!fromHook || !toHook) return;
  toHook.on('error', () => undefined);
  fromHook.on('error', () => undefined);
  if (!handler) {
    toHook.end();
    fromHook.resume();
    return;
  }
  readUntilEnd(fromHook, (lines) => {
    const updates: PushedRefUpdate[] = [];
    for (const line of lines) {
      const [oldOid, newOid, ...ref] = line.split(' ');
      if (oldOid && newOid && ref.length) updates.push({ oldOid, newOid, ref: ref.join(' ') });
    }
    handler(updates)
      .then((message) => toHook.end(message))
      .catch((err) => {
        onError(err);
        toHook.end();
      });
  });
}

/** Collects a hook's lines up to its `end` line, then hands them over once; later data is ignored. */
function readUntilEnd(fromHook: Readable, onLines: (lines: string[]) => void): void {
  let buffer = '';
  let done = false;
  fromHook.on('data', (chunk: Buffer) => {
    if (done) return;
    buffer += chunk.toString('utf8');
    if (!/(^|\n)end\n/.test(buffer)) return;
    done = true;
    onLines(buffer.split('\n'));
  });
}

/**
 * Answers the pre-receive hook of one receive-pack: reads its lines from fd 3 until `end`,
 * asks `decide`, writes `ok` or `deny <message>` to fd 4.
 */
function serveHook(child: ChildProcess, decide: PushCheck, onError: (err: unknown) => void): void {
  const fromHook = child.stdio[3] as Readable | null;
  const toHook = child.stdio[4] as Writable | null;
  if (!fromHook || !toHook) return;
  toHook.on('error', () => undefined);
  readUntilEnd(fromHook, (lines) => {
    const updates: PushedRefUpdate[] = [];
    const env: Record<string, string> = {};
    for (const line of lines) {
      const [kind, ...rest] = line.split(' ');
      if (kind === 'env' && rest[0] && rest.slice(1).join(' ')) env[rest[0]] = rest.slice(1).join(' ');
      else if (kind === 'update' && rest.length >= 3) updates.push({ oldOid: rest[0], newOid: rest[1], ref: rest.slice(2).join(' ') });
    }
    decide(updates, env)
      .then((refusal) => toHook.end(refusal ? `deny ${refusal.replace(/\s+/g, ' ')}\n` : 'ok\n'))
      .catch((err) => {
        onError(err);
        toHook.end(`deny ${INTERNAL_ERROR_MESSAGE}\n`);
      });
  });
  fromHook.on('error', () => undefined);
}
