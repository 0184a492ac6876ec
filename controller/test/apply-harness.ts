/** Real nginx for tests: echo backends, a temp prefix, NginxProcess, and cleanup. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { NginxProcess } from '../src/apply/nginx';
import type { Graph } from '../src/graph/types';
import { buildModel } from '../src/model';
import { renderConfig, type RenderOptions } from '../src/render';
import type { Logger } from '../src/log';
import { startEchoBackend, type EchoBackend } from '../../e2e/support/echo-backend';
import { freePort } from '../../e2e/support/ports';
import { defaultNginxBinary } from '../src/apply/nginx-binary';

export interface LogRecord {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

export function captureLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void records.push({ level, msg, fields });
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export class Harness {
  readonly prefix: string;
  readonly log = captureLogger();
  readonly nginx: NginxProcess;
  readonly backends = new Map<string, EchoBackend>();
  private constructor(prefix: string, options: { checkBeforeReload?: boolean }) {
    this.prefix = prefix;
    this.nginx = new NginxProcess({ prefix, binary: defaultNginxBinary(), log: this.log, ...options });
  }

  static async create(backendNames: string[] = [], options: { checkBeforeReload?: boolean } = {}): Promise<Harness> {
    const h = new Harness(fs.mkdtempSync(path.join(os.tmpdir(), 'pc-ngx-')), options);
    for (const name of backendNames) h.backends.set(name, await startEchoBackend(name));
    return h;
  }

  port(name: string): number {
    const b = this.backends.get(name);
    if (!b) throw new Error(`no backend ${name}`);
    return b.port;
  }

  render(graph: Graph, options: Partial<RenderOptions> = {}) {
    return renderConfig(buildModel(graph), { listenAddress: '127.0.0.1', prefix: this.prefix, workerProcesses: 1, ...options });
  }

  async close(): Promise<void> {
    await this.nginx.stop();
    for (const b of this.backends.values()) await b.close();
    fs.rmSync(this.prefix, { recursive: true, force: true });
  }
}

export { freePort };
