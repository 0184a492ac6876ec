/**
 * The agent's side of the config channel (../dataplane/protocol/): one long GET that
 * receives config frames, and a POST per outcome. It reconnects on any failure with backoff
 * (0.2 s doubling to 5 s; at once after a clean end, e.g. a leader change), re-reads the token
 * file on every connect (the kubelet rotates projected tokens), and gives up on a stream that
 * stays silent for longer than the server's ping interval allows.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import type { Logger } from '../log';
import { applyDelta, configVersion, CONFIG_PATH, SILENCE_TIMEOUT_MS, STATUS_PATH, type ApplyReport, type ConfigFrame, type RenderVariant } from '../dataplane/protocol';

export interface ChannelOptions {
  server: string;
  gateway: string;
  pod: string;
  tokenFile: string;
  caFile?: string;
  variant: RenderVariant;
  log: Logger;
}

export class AgentChannel {
  private stopped = false;
  private req?: http.ClientRequest;
  private delay = 200;
  /** Reports started so far: a retried report gives way to a newer one. */
  private reports = 0;
  connected = false;
  private readonly connectionListeners: ((connected: boolean) => void)[] = [];

  constructor(private readonly o: ChannelOptions) {}

  onConnection(listener: (connected: boolean) => void): void {
    this.connectionListeners.push(listener);
  }

  private setConnected(value: boolean): void {
    if (this.connected === value) return;
    this.connected = value;
    for (const l of this.connectionListeners) l(value);
  }

  private transport(url: URL) {
    return url.protocol === 'https:' ? https : http;
  }

  private tlsOptions(): https.RequestOptions {
    return this.o.caFile ? { ca: fs.readFileSync(this.o.caFile) } : {};
  }

  private token(): string {
    return fs.readFileSync(this.o.tokenFile, 'utf8').trim();
  }

  /** Runs until stop(); `have` tells which version is live, `onFrame` gets every config frame. */
  async run(have: () => string | undefined, onFrame: (frame: Extract<ConfigFrame, { type: 'config' | 'current' }>) => void): Promise<void> {
    while (!this.stopped) {
      const clean = await this.once(have(), onFrame).catch((err: Error) => {
        this.o.log.warn('config channel failed; reconnecting', { component: 'agent', error: err.message, retryMs: this.delay });
        return false;
      });
      this.setConnected(false);
      if (this.stopped) break;
      if (clean) continue;
      await new Promise((r) => setTimeout(r, this.delay));
      this.delay = Math.min(this.delay * 2, 5000);
    }
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }

  /** One stream; resolves true when the server ended it cleanly. */
  private once(have: string | undefined, onFrame: (frame: Extract<ConfigFrame, { type: 'config' | 'current' }>) => void): Promise<boolean> {
    const url = new URL(CONFIG_PATH, this.o.server);
    url.searchParams.set('gateway', this.o.gateway);
    url.searchParams.set('pod', this.o.pod);
    url.searchParams.set('prefix', this.o.variant.prefix);
    url.searchParams.set('listen', this.o.variant.listenAddress);
    if (have) url.searchParams.set('have', have);
    url.searchParams.set('delta', '1');
    const token = this.token();
    return new Promise<boolean>((resolve, reject) => {
      const req = this.transport(url).request(url, { method: 'GET', headers: { authorization: `Bearer ${token}` }, ...this.tlsOptions() }, (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${body.slice(0, 500)}`)));
          return;
        }
        this.delay = 200;
        this.setConnected(true);
        this.o.log.info('connected to the config server', { component: 'agent', server: this.o.server, gateway: this.o.gateway });
        // Chunks of the line being received: a full config is megabytes in TLS-record chunks,
        // joined once its newline arrives (not rescanned on every chunk).
        let pending: string[] = [];
        /** The last config on this stream: what a delta frame edits. */
        let base: { version: string; files: Record<string, string> } | undefined;
        let silence = setTimeout(() => req.destroy(new Error('the config server went silent')), SILENCE_TIMEOUT_MS);
        res.setEncoding('utf8');
        const onLine = (line: string): boolean => {
          if (!line) return true;
          let frame: ConfigFrame;
          try {
            frame = JSON.parse(line);
          } catch {
            req.destroy(new Error('the config server sent a line that is not JSON'));
            return false;
          }
          if (frame.type === 'delta') {
            let files: Record<string, string> | undefined;
            try {
              if (base?.version === frame.base) files = applyDelta(base.files, frame.files);
            } catch {
              /* a delta that does not fit: as below */
            }
            // A delta is applied only to the config it was made from, and must give exactly the
            // version's files; else the stream starts over (the controller then sends it whole).
            if (!files || configVersion(files) !== frame.version) {
              req.destroy(new Error(`the config server sent a delta for ${frame.base} that does not give ${frame.version} here`));
              return false;
            }
            this.o.log.info('config received', { component: 'agent', version: frame.version, base: frame.base, bytes: line.length });
            base = { version: frame.version, files };
            onFrame({ type: 'config', version: frame.version, files });
            return true;
          }
          if (frame.type === 'config') {
            this.o.log.info('config received', { component: 'agent', version: frame.version, bytes: line.length });
            base = { version: frame.version, files: frame.files };
          }
          if (frame.type === 'config' || frame.type === 'current') onFrame(frame);
          return true;
        };
        res.on('data', (chunk: string) => {
          clearTimeout(silence);
          silence = setTimeout(() => req.destroy(new Error('the config server went silent')), SILENCE_TIMEOUT_MS);
          let from = 0;
          let nl: number;
          while ((nl = chunk.indexOf('\n', from)) >= 0) {
            pending.push(chunk.slice(from, nl));
            const line = pending.length === 1 ? pending[0] : pending.join('');
            pending = [];
            from = nl + 1;
            if (!onLine(line)) return;
          }
          if (from < chunk.length) pending.push(chunk.slice(from));
        });
        res.on('end', () => {
          clearTimeout(silence);
          resolve(true);
        });
        res.on('error', (err) => {
          clearTimeout(silence);
          reject(err);
        });
        res.on('close', () => {
          clearTimeout(silence);
          resolve(!res.errored);
        });
      });
      this.req = req;
      req.on('error', reject);
      req.end();
    });
  }

  /**
   * Reports an apply outcome. The POST is a new request, and agents reach the controller through
   * its Service, so it may land on a replica that is not the leader (503) or on one that just went
   * away: it is retried on a new connection (the Service picks again) with backoff, up to ~10 s,
   * unless a newer report supersedes it. A report still lost is logged; the agent reports again
   * on its next apply, and when its stream reconnects.
   */
  async report(report: Omit<ApplyReport, 'gateway' | 'pod'>): Promise<void> {
    const url = new URL(STATUS_PATH, this.o.server);
    const body = JSON.stringify({ ...report, gateway: this.o.gateway, pod: this.o.pod });
    const seq = ++this.reports;
    let delay = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(url, body);
        return;
      } catch (err) {
        // A refusal (401, 403, 400) will not change on another replica; 5xx and lost connections may.
        const status = (err as { status?: number }).status;
        const last = attempt >= 8 || this.stopped || seq !== this.reports || (status !== undefined && status < 500);
        if (last) {
          this.o.log.warn('could not report the apply outcome to the controller', { component: 'agent', error: (err as Error).message, attempts: attempt });
          return;
        }
        this.o.log.debug('reporting the apply outcome failed; retrying', { component: 'agent', error: (err as Error).message, retryMs: delay });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private post(url: URL, body: string): Promise<void> {
    const token = this.token();
    return new Promise<void>((resolve, reject) => {
      const req = this.transport(url).request(
        url,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: 10000,
          // A fresh connection each time: a kept-alive one would return to the same replica.
          agent: false,
          ...this.tlsOptions(),
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 204 ? resolve() : reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode }))));
        },
      );
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.end(body);
    });
  }
}
