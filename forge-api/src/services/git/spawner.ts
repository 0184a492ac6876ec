/**
 * Starts git through a small long-lived helper process (spawner-child.cjs) instead of forking
 * the forge. libuv spawns with fork() on Linux, and a fork copies the page tables of the whole
 * forge process (~300 MiB resident: Prisma, the TypeScript loader, caches), then the child tears
 * them down again on exec: a few ms of CPU on each side for every git command, paid on every
 * clone. The helper holds next to nothing, so its forks are cheap.
 *
 * The data does not pass through the helper: for each command the forge opens a Unix socket
 * connection to itself, keeps one end and hands the other to the helper over the IPC channel;
 * the helper gives that end to git as its stdin and stdout and lets go of it. The forge writes
 * git's input only after the helper said git runs (so the helper never reads any of it), and
 * reads git's output from its end. git's stderr is collected by the helper and arrives with the
 * exit status, which suits callers that only log it (smart HTTP); anything that must relay
 * stderr as it comes (SSH progress) spawns git directly.
 *
 * If the helper cannot be started or dies, commands fall back to a direct spawn.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { GIT_ISOLATION, gitEnv } from './run';

/** What callers use of a running git command; a ChildProcess with pipes has all of it. */
export interface GitProcess extends EventEmitter {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
}

const HELPER = path.join(__dirname, 'spawner-child.cjs');
const ID_BYTES = 8;

interface Pending {
  proc: HelperGit;
}

/** A git command run by the helper: the forge's end of the socket plus the helper's reports. */
class HelperGit extends EventEmitter implements GitProcess {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private socket: net.Socket | null = null;
  private exited = false;
  private streamClosed = false;
  private closed = false;

  constructor(private readonly sendKill: (signal: NodeJS.Signals) => void) {
    super();
  }

  /** The forge's end of git's stdin/stdout, once the connection is matched to this command. */
  attach(socket: net.Socket): void {
    this.socket = socket;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.streamClosed = true;
      this.maybeClose();
    });
    socket.pipe(this.stdout);
    socket.resume();
  }

  /**
   * git runs and the helper let go of its end: git's input may flow now (not before, so no
   * byte of it can be read by the helper).
   */
  spawned(): void {
    if (this.socket) this.stdin.pipe(this.socket);
  }

  exit(code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    if (code === -1) this.emit('error', new Error(stderr || 'git could not be started'));
    this.stderr.end(stderr ? Buffer.from(stderr) : undefined);
    if (!this.socket) {
      // Never connected: nothing will close.
      this.stdout.end();
      this.streamClosed = true;
    } else if (code === -1) {
      this.socket.destroy();
    }
    this.maybeClose();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited) return false;
    this.sendKill(signal);
    return true;
  }

  private maybeClose(): void {
    if (this.closed || !this.exited || !this.streamClosed) return;
    this.closed = true;
    this.emit('close', this.exitCode, this.signalCode);
  }
}

export class GitSpawner {
  private helper: ChildProcess | null = null;
  private server: net.Server | null = null;
  private socketDir: string | null = null;
  private starting: Promise<boolean> | null = null;
  private running = new Map<string, Pending>();
  /** Accepted connections waiting for their id. */
  private accepted = new Map<string, (socket: net.Socket) => void>();
  private next = 0;
  private failed = false;
  private closedForGood = false;

  /** Is the helper up (tests)? */
  get ready(): boolean {
    return this.helper !== null && this.helper.connected;
  }

  /** Runs `git args...` with `env` added to git's environment (run.ts gitEnv). */
  spawn(args: string[], env: Record<string, string> = {}): GitProcess {
    if (this.failed || this.closedForGood) return direct(args, env);
    if (!this.ready) {
      // First use (or after the helper died): start it, and run this command directly.
      void this.start();
      return direct(args, env);
    }
    const id = (this.next++).toString(16).padStart(ID_BYTES, '0').slice(-ID_BYTES);
    const helper = this.helper!;
    const proc = new HelperGit((signal) => {
      if (helper.connected) helper.send({ op: 'kill', id, signal });
    });
    this.running.set(id, { proc });
    const fail = (message: string) => {
      this.accepted.delete(id);
      if (this.running.get(id)?.proc !== proc) return;
      this.running.delete(id);
      proc.exit(-1, null, message);
    };
    // The end git gets: connected here, sent to the helper and closed here. The id travels
    // first, so the end the server accepts (the forge's) can be matched to this command.
    const gitEnd = net.connect(this.socketPath());
    gitEnd.on('error', () => fail('connecting to the git helper failed'));
    gitEnd.write(id);
    this.accepted.set(id, (forgeEnd) => {
      proc.attach(forgeEnd);
      if (!helper.connected) {
        gitEnd.destroy();
        fail('the git helper process is gone');
        return;
      }
      helper.send({ op: 'spawn', id, args, env: gitExtraEnv(env) }, gitEnd, (err) => {
        gitEnd.destroy();
        if (err) fail(err.message);
      });
    });
    return proc;
  }

  /** Starts the helper now (a server does so at start; otherwise the first command does). */
  async warm(): Promise<boolean> {
    if (this.failed || this.closedForGood) return false;
    return this.ready || this.start();
  }

  /** Stops the helper (its running git commands get SIGTERM). */
  async close(): Promise<void> {
    this.closedForGood = true;
    const helper = this.helper;
    this.helper = null;
    if (helper && helper.exitCode === null) {
      const gone = new Promise((r) => helper.once('exit', r));
      helper.disconnect();
      await Promise.race([gone, new Promise((r) => setTimeout(r, 2000))]);
    }
    // Not waiting for connections: those of commands still running end with them.
    this.server?.close();
    this.server = null;
    if (this.socketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
    this.socketDir = null;
  }

  private socketPath(): string {
    return path.join(this.socketDir!, 's');
  }

  private start(): Promise<boolean> {
    if (this.starting) return this.starting;
    this.starting = this.launch()
      .catch(() => {
        this.failed = true;
        return false;
      })
      .finally(() => {
        this.starting = null;
      });
    return this.starting;
  }

  /** Starts the helper and the socket server; resolves once both are ready. */
  private async launch(): Promise<boolean> {
    if (!this.server) {
      this.socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-git-'));
      const server = net.createServer((end) => this.onConnection(end));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.socketPath(), () => resolve());
      });
      server.unref();
      this.server = server;
    }
    const helper = fork(HELPER, [], {
      // No TypeScript loader, no inspector flags: a bare Node process.
      execArgv: [],
      env: process.env,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    await new Promise<void>((resolve, reject) => {
      helper.once('spawn', resolve);
      helper.once('error', reject);
    });
    helper.on('message', (m: { op: string; id: string; code?: number | null; signal?: NodeJS.Signals | null; stderr?: string }) => {
      const pending = this.running.get(m.id);
      if (!pending) return;
      if (m.op === 'spawned') pending.proc.spawned();
      else if (m.op === 'exit') {
        this.running.delete(m.id);
        pending.proc.exit(m.code ?? null, m.signal ?? null, m.stderr ?? '');
      }
    });
    helper.on('exit', () => {
      if (this.helper === helper) this.helper = null;
      // Commands it ran are gone with it.
      for (const [id, p] of this.running) {
        this.running.delete(id);
        p.proc.exit(-1, null, 'the git helper process ended');
      }
    });
    helper.unref();
    (helper.channel as unknown as { unref?: () => void } | undefined)?.unref?.();
    this.helper = helper;
    return true;
  }

  private onConnection(end: net.Socket): void {
    end.on('error', () => undefined);
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < ID_BYTES) return;
      end.off('data', onData);
      end.pause();
      const id = got.subarray(0, ID_BYTES).toString('latin1');
      const take = this.accepted.get(id);
      this.accepted.delete(id);
      if (!take || got.length !== ID_BYTES) {
        end.destroy();
        return;
      }
      take(end);
    };
    end.on('data', onData);
  }
}

/** What gitEnv adds to the process environment (the helper has the forge's environment already). */
function gitExtraEnv(extra: Record<string, string>): Record<string, string> {
  return { ...GIT_ISOLATION, ...extra };
}

function direct(args: string[], env: Record<string, string>): GitProcess {
  return spawn('git', args, { env: gitEnv(env) });
}
