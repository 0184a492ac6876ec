/**
 * The agent loop: config frames from the controller -> apply/ (stage, nginx -t, reload with
 * handover, last good config kept on refusal) -> a report back. Frames that arrive during an
 * apply are coalesced: only the newest is applied next. A refused config is retried with
 * backoff (2 s doubling to 60 s) until a newer one arrives: the cause may be outside the config
 * (a port still held by a process that is going away).
 *
 * The ports nginx could not listen on because another process holds them are kept (apply/ports.ts
 * HeldPorts, checked with binds here, beside nginx) and sent with every report: the controller
 * leaves the listeners on them out of the next config, so the rest is served, and puts them back
 * once a recheck (every `recheckMs` while any is held) finds them free and reports it.
 */
import type { Logger } from '../log';
import type { ConfigFrame } from '../dataplane/protocol';
import type { ApplyResult } from '../apply/nginx';
import { HeldPorts, type HeldPort } from '../apply/ports';
import type { AgentMetrics } from './metrics';

export interface ConfigApplier {
  apply(config: { files: Record<string, string> }): Promise<ApplyResult>;
}

export interface Reporter {
  report(r: { version: string; ok: boolean; message?: string; heldPorts?: HeldPort[] }): Promise<void>;
}

export interface Outcome {
  version: string;
  ok: boolean;
  message?: string;
}

export class AgentLoop {
  /** The version nginx serves (the last one applied successfully). */
  live?: string;
  /** The outcome of the newest version received. */
  last?: Outcome;
  private pending?: { version: string; files: Record<string, string> };
  private newest?: { version: string; files: Record<string, string> };
  private running?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private retryMs: number;
  private recheckTimer?: NodeJS.Timeout;
  private stopped = false;
  private readonly appliedListeners: ((o: Outcome) => void)[] = [];

  constructor(
    private readonly nginx: ConfigApplier,
    private readonly reporter: Reporter,
    private readonly log: Logger,
    private readonly metrics?: AgentMetrics,
    private readonly retryBaseMs = 2000,
    private readonly held = new HeldPorts(),
    private readonly recheckMs = 2000,
  ) {
    this.retryMs = retryBaseMs;
  }

  /** An outcome as reported: with the ports held now. */
  private send(o: Outcome): Promise<void> {
    const held = this.held.list();
    return this.reporter.report(held.length > 0 ? { ...o, heldPorts: [...held] } : o);
  }

  onApplied(listener: (o: Outcome) => void): void {
    this.appliedListeners.push(listener);
  }

  frame(frame: Extract<ConfigFrame, { type: 'config' | 'current' }>): void {
    if (frame.type === 'current') {
      // A reconnect: the controller has what we serve; tell it how that went (it forgot).
      if (this.last?.version === frame.version) void this.send(this.last);
      else if (this.live === frame.version) void this.send({ version: frame.version, ok: true });
      return;
    }
    this.pending = { version: frame.version, files: frame.files };
    this.newest = this.pending;
    this.kick();
  }

  /** Resolves when nothing is waiting to be applied (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.recheckTimer) clearTimeout(this.recheckTimer);
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.pending) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      const next = this.pending;
      this.pending = undefined;
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      if (next.version === this.live) {
        this.last = { version: next.version, ok: true };
        await this.send(this.last);
        continue;
      }
      const t0 = process.hrtime.bigint();
      let result: ApplyResult;
      try {
        result = await this.nginx.apply({ files: next.files });
      } catch (err) {
        result = { ok: false, message: (err as Error).message };
      }
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const label = result.ok ? 'success' : 'failure';
      this.metrics?.applies.inc({ result: label });
      this.metrics?.applyDuration.observe({ result: label }, seconds);
      this.metrics?.lastApplySuccess.set(result.ok ? 1 : 0);
      if (result.ok) {
        this.live = next.version;
        this.retryMs = this.retryBaseMs;
        this.metrics?.configBytes.set(Object.values(next.files).reduce((n, f) => n + Buffer.byteLength(f), 0));
        this.log.info('configuration applied', { component: 'agent', version: next.version, ms: Math.round(seconds * 1000) });
      } else {
        this.log.error('nginx refused the configuration; the last good one keeps serving', { component: 'agent', version: next.version, live: this.live, error: result.message });
      }
      if (!result.ok && result.portFailures?.length && (await this.held.add(result.portFailures))) {
        this.log.warn('ports held by another process; the controller leaves their listeners out until they are free', { component: 'agent', ports: this.held.list().map((p) => `${p.port}/${p.transports.join('+')}`) });
        this.scheduleRecheck();
      }
      this.last = result.ok ? { version: next.version, ok: true } : { version: next.version, ok: false, message: result.message };
      for (const l of this.appliedListeners) l(this.last);
      await this.send(this.last);
      if (!result.ok && this.retryBaseMs > 0) this.scheduleRetry(next);
    }
  }

  /** While ports are held: a bind per port every recheckMs; one found free is reported at once. */
  private scheduleRecheck(): void {
    if (this.stopped || this.recheckTimer || this.held.list().length === 0 || this.recheckMs <= 0) return;
    this.recheckTimer = setTimeout(() => {
      void this.held.recheck().then(async (freed) => {
        this.recheckTimer = undefined;
        if (freed && !this.stopped) {
          this.log.info('held ports free again; the controller puts their listeners back', { component: 'agent', held: this.held.list().map((p) => `${p.port}/${p.transports.join('+')}`) });
          if (this.last) await this.send(this.last);
        }
        this.scheduleRecheck();
      });
    }, this.recheckMs);
    this.recheckTimer.unref();
  }

  private scheduleRetry(failed: { version: string; files: Record<string, string> }): void {
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 60000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.newest !== failed || this.pending) return;
      this.log.info('retrying the refused configuration', { component: 'agent', version: failed.version, afterMs: delay });
      // Not `live`, so it is applied again rather than skipped.
      this.pending = failed;
      this.kick();
    }, delay);
    this.retryTimer.unref();
  }
}
