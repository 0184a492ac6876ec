/**
 * The agent's Prometheus metrics: its own (applies, their duration, the channel) and nginx's
 * stub_status, read from nginx's private status socket when scraped (so a scrape sees the
 * numbers of that moment and an idle agent does no work).
 */
import * as http from 'http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface StubStatus {
  active: number;
  accepted: number;
  handled: number;
  requests: number;
  reading: number;
  writing: number;
  waiting: number;
}

/** nginx's stub_status text -> numbers (undefined when it is not that text). */
export function parseStubStatus(text: string): StubStatus | undefined {
  const active = /Active connections:\s*(\d+)/.exec(text);
  const counts = /\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n/.exec(text);
  const rww = /Reading:\s*(\d+)\s+Writing:\s*(\d+)\s+Waiting:\s*(\d+)/.exec(text);
  if (!active || !counts || !rww) return undefined;
  return {
    active: Number(active[1]),
    accepted: Number(counts[1]),
    handled: Number(counts[2]),
    requests: Number(counts[3]),
    reading: Number(rww[1]),
    writing: Number(rww[2]),
    waiting: Number(rww[3]),
  };
}

export function readStubStatus(socketPath: string): Promise<StubStatus | undefined> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/stub_status', timeout: 2000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 ? parseStubStatus(body) : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
  });
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly applies: Counter<'result'>;
  readonly applyDuration: Histogram<'result'>;
  readonly connected: Gauge;
  readonly configBytes: Gauge;
  readonly lastApplySuccess: Gauge;

  constructor(stubStatusSocket: () => string) {
    const registers = [this.registry];
    this.applies = new Counter({ name: 'portcullis_agent_config_applies_total', help: 'Configurations applied to nginx, by result', labelNames: ['result'], registers });
    this.applyDuration = new Histogram({
      name: 'portcullis_agent_config_apply_duration_seconds',
      help: 'Time to apply a configuration: write, nginx -t, reload until the new workers serve',
      labelNames: ['result'],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.connected = new Gauge({ name: 'portcullis_agent_controller_connected', help: '1 while the config channel to the controller is open', registers });
    this.configBytes = new Gauge({ name: 'portcullis_agent_config_bytes', help: 'Size of the configuration nginx serves', registers });
    this.lastApplySuccess = new Gauge({ name: 'portcullis_agent_last_apply_success', help: '1 if the last configuration received was applied, 0 if nginx refused it', registers });
    const stub = (name: string, help: string, field: keyof StubStatus, counter: boolean) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const s = await readStubStatus(stubStatusSocket());
          if (s) this.set(s[field]);
          else if (!counter) this.set(0);
        },
      });
    // The stub_status counts are totals since nginx started: exposed as gauges holding them,
    // named _total as Prometheus counters are (rate() works on them the same way).
    stub('nginx_connections_active', 'Active client connections (stub_status)', 'active', false);
    stub('nginx_connections_reading', 'Connections where nginx is reading the request header', 'reading', false);
    stub('nginx_connections_writing', 'Connections where nginx is writing the response', 'writing', false);
    stub('nginx_connections_waiting', 'Idle keep-alive connections', 'waiting', false);
    stub('nginx_connections_accepted_total', 'Accepted client connections', 'accepted', true);
    stub('nginx_connections_handled_total', 'Handled client connections', 'handled', true);
    stub('nginx_http_requests_total', 'Client requests', 'requests', true);
  }
}
