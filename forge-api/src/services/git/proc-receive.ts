/**
 * git's proc-receive protocol (githooks(5)), the forge's side of it. With
 * `receive.procReceiveRefs=refs/for`, receive-pack does not write the refs/for/* updates of a
 * push itself: it hands them, with the push options, to the proc-receive hook and reports to the
 * client what the hook answers (ok with the ref that really changed, ng with a reason, or "fall
 * through" to let receive-pack write it). That is how an AGit push (`git push origin
 * HEAD:refs/for/main -o topic=x`) turns into a pull request instead of a stored ref.
 *
 * The hook is a relay (transport.ts): its pkt-lines reach the forge on one pipe and the forge's
 * answer goes back on another, so this module only speaks the protocol.
 */
import type { Readable, Writable } from 'node:stream';

/** One command git hands the hook: `<old> <new> <ref>`. */
export interface ProcReceiveCommand {
  oldOid: string;
  newOid: string;
  ref: string;
}

/** The forge's verdict on one command. */
export type ProcReceiveResult =
  /** Done by the forge; `refname` (and its old and new values) is what the client is told changed. */
  | { ref: string; refname: string; oldOid?: string; newOid: string; forced?: boolean }
  /** Refused with this reason (the client prints `! [remote rejected] ... (<reason>)`). */
  | { ref: string; error: string }
  /** Not the forge's business: receive-pack writes the ref as usual. */
  | { ref: string; fallThrough: true };

export interface ProcReceiveAnswer {
  results: ProcReceiveResult[];
  /** Printed to the client as `remote:` lines after the answer. */
  message?: string;
}

/** Decides the commands of one push; `options` are the push options (`-o key=value`), in order. */
export type ProcReceiveHandler = (commands: ProcReceiveCommand[], options: string[]) => Promise<ProcReceiveAnswer>;

const FLUSH = Symbol('flush');
type Packet = string | typeof FLUSH;

export function pkt(line: string): Buffer {
  const body = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

/** The pipe closed: git exited, after the hook (if it ran at all, `started`) stopped talking. */
class HookEndedError extends Error {
  constructor(readonly started: boolean) {
    super('proc-receive: the hook ended early');
  }
}

/** Reads pkt-lines from a stream, one at a time. */
class PacketReader {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended = false;
  /** Whether any packet came: a push without refs/for/* never runs the hook. */
  started = false;

  constructor(input: Readable) {
    input.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    const end = () => {
      this.ended = true;
      this.wake();
    };
    input.on('end', end);
    input.on('close', end);
    input.on('error', end);
  }

  private wake() {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  async next(): Promise<Packet> {
    for (;;) {
      if (this.buffer.length >= 4) {
        const len = parseInt(this.buffer.subarray(0, 4).toString('ascii'), 16);
        if (Number.isNaN(len) || (len > 0 && len < 4)) throw new Error('proc-receive: malformed pkt-line');
        if (len === 0) {
          this.buffer = this.buffer.subarray(4);
          this.started = true;
          return FLUSH;
        }
        if (this.buffer.length >= len) {
          this.started = true;
          const line = this.buffer.subarray(4, len).toString('utf8');
          this.buffer = this.buffer.subarray(len);
          return line.endsWith('\n') ? line.slice(0, -1) : line;
        }
      }
      if (this.ended) throw new HookEndedError(this.started);
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Data lines up to the next flush. */
  async section(): Promise<string[]> {
    const lines: string[] = [];
    for (;;) {
      const p = await this.next();
      if (p === FLUSH) return lines;
      lines.push(p);
    }
  }
}

/** The answer lines of one result, as the protocol spells them. */
export function resultLines(r: ProcReceiveResult): string[] {
  if ('error' in r) return [`ng ${r.ref} ${r.error}`];
  if ('fallThrough' in r) return [`ok ${r.ref}`, 'option fall-through'];
  const lines = [`ok ${r.ref}`, `option refname ${r.refname}`];
  if (r.oldOid && !/^0+$/.test(r.oldOid)) lines.push(`option old-oid ${r.oldOid}`);
  lines.push(`option new-oid ${r.newOid}`);
  if (r.forced) lines.push('option forced-update');
  return lines;
}

/**
 * Serves one run of the proc-receive hook: version negotiation, the commands and push
 * options, then the handler's answer and its message. A handler that throws refuses every
 * command with `failure` (the push is refused, never half-applied by the protocol).
 */
export async function serveProcReceive(
  input: Readable,
  output: Writable,
  messages: Writable,
  handler: ProcReceiveHandler,
  onError: (err: unknown) => void,
  failure: string,
): Promise<void> {
  const reader = new PacketReader(input);
  let commands: ProcReceiveCommand[] = [];
  try {
    const [version] = await reader.section();
    // "version=1\0push-options atomic ..." (features after a NUL) or plain "version=1".
    const [head, features = ''] = (version ?? '').split('\0');
    if (head !== 'version=1') throw new Error(`proc-receive: unsupported version ${head}`);
    const pushOptions = features.split(' ').includes('push-options');
    output.write(Buffer.concat([pkt(`version=1${pushOptions ? '\0push-options' : ''}\n`), Buffer.from('0000')]));
    commands = (await reader.section()).flatMap((line) => {
      const [oldOid, newOid, ref] = line.split(' ');
      return oldOid && newOid && ref ? [{ oldOid, newOid, ref }] : [];
    });
    const options = pushOptions ? await reader.section() : [];
    let answer: ProcReceiveAnswer;
    try {
      answer = await handler(commands, options);
    } catch (err) {
      onError(err);
      answer = { results: commands.map((c) => ({ ref: c.ref, error: failure })) };
    }
    output.end(Buffer.concat([...answer.results.flatMap(resultLines).map(pkt), Buffer.from('0000')]));
    messages.end(answer.message ?? '');
  } catch (err) {
    // The pipe closing before the hook said anything is the push that had no refs/for/*.
    if (!(err instanceof HookEndedError && !err.started)) onError(err);
    output.end();
    messages.end();
  }
}
