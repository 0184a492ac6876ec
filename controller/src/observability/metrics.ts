/**
 * The controller's Prometheus metrics (prom-client): reconcile duration, nginx reloads and their
 * failures (local data plane), rendered config size, resources by kind, leadership, status
 * writes and API requests. Values are set from what the loop already reports (ReconcileSummary,
 * the provider's counters): no stage knows about metrics.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReconcileSummary } from '../reconcile';

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileDuration: Histogram<'phase'>;
  readonly reconciles: Counter;
  readonly reloads: Counter;
  readonly reloadFailures: Counter;
  readonly configBytes: Gauge;
  readonly resources: Gauge<'kind'>;
  readonly leader: Gauge;
  readonly statusWrites: Counter;
  readonly apiRequests: Counter<'verb' | 'code'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'portcullis_controller_' });
    this.reconcileDuration = new Histogram({
      name: 'portcullis_controller_reconcile_duration_seconds',
      help: 'Time of one reconcile (phase "total") and of its phases: scan, build, render, apply, status',
      labelNames: ['phase'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.reconciles = new Counter({ name: 'portcullis_controller_reconciles_total', help: 'Reconciles run', registers });
    this.reloads = new Counter({ name: 'portcullis_controller_nginx_reloads_total', help: 'nginx configurations applied by the controller (start or reload)', registers });
    this.reloadFailures = new Counter({ name: 'portcullis_controller_nginx_reload_failures_total', help: 'nginx configurations the controller tried to apply and nginx refused', registers });
    this.configBytes = new Gauge({ name: 'portcullis_controller_config_bytes', help: 'Size of the rendered nginx configuration (characters, all files)', registers });
    this.resources = new Gauge({ name: 'portcullis_controller_resources', help: 'Resources the controller reads, by kind', labelNames: ['kind'], registers });
    this.leader = new Gauge({ name: 'portcullis_controller_leader', help: '1 while this replica is the leader (writes statuses, provisions), else 0', registers });
    this.statusWrites = new Counter({ name: 'portcullis_controller_status_writes_total', help: 'Status updates sent to the API server', registers });
    this.apiRequests = new Counter({ name: 'portcullis_controller_api_requests_total', help: 'Requests to the Kubernetes API server, by verb and HTTP status', labelNames: ['verb', 'code'], registers });
  }

  observeReconcile(summary: ReconcileSummary): void {
    this.reconciles.inc();
    this.reconcileDuration.observe({ phase: 'total' }, summary.ms / 1000);
    for (const [phase, ms] of Object.entries(summary.phases)) this.reconcileDuration.observe({ phase }, ms / 1000);
    if (summary.applied) {
      this.reloads.inc();
      if (!summary.programmed) this.reloadFailures.inc();
    }
    if (summary.configBytes !== undefined) this.configBytes.set(summary.configBytes);
  }

  setResources(counts: Record<string, number>): void {
    for (const [kind, n] of Object.entries(counts)) this.resources.set({ kind }, n);
  }
}
