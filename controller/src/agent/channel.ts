/**
 * The agent's side of the config channel (../configserver/protocol.ts): one long GET that
 * receives config frames, and a POST per outcome. It reconnects on any failure with backoff
 * (0.2 s doubling to 5 s; at once after a clean end, e.g. a leader change), re-reads the token
 * file on every connect (the kubelet rotates projected tokens), and gives up on a stream that
 * stays silent for longer than the server's ping interval allows.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import type { Logger } from '../log';
import { CONFIG_PATH, SILENCE_TIMEOUT_MS, STATUS_PATH, type ApplyReport, type ConfigFrame, type RenderVariant } from '../configserver/protocol';

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
        let buffer = '';
        let silence = setTimeout(() => req.destroy(new Error('the config server went silent')), SILENCE_TIMEOUT_MS);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          clearTimeout(silence);
          silence = setTimeout(() => req.destroy(new Error('the config server went silent')), SILENCE_TIMEOUT_MS);
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line) continue;
            let frame: ConfigFrame;
            try {
              frame = JSON.parse(line);
            } catch {
              req.destroy(new Error('the config server sent a line that is not JSON'));
              return;
            }
            if (frame.type === 'config' || frame.type === 'current') onFrame(frame);
          }
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

  /** Reports an apply outcome; failures are logged (the next apply reports again). */
  async report(report: Omit<ApplyReport, 'gateway' | 'pod'>): Promise<void> {
    const url = new URL(STATUS_PATH, this.o.server);
    const body = JSON.stringify({ ...report, gateway: this.o.gateway, pod: this.o.pod });
    try {
      const token = this.token();
      await new Promise<void>((resolve, reject) => {
        const req = this.transport(url).request(
          url,
          { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 10000, ...this.tlsOptions() },
          (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
          },
        );
        req.on('error', reject);
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.end(body);
      });
    } catch (err) {
      this.o.log.warn('could not report the apply outcome to the controller', { component: 'agent', error: (err as Error).message });
    }
  }
}
