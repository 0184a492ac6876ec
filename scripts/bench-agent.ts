/**
 * npm run bench:agent — change-to-serving through the API server and the agent hop, at 1,000
 * HTTPRoutes: the real API server (../shared/tools/k8s), the controller as a local process
 * (--provider=kubernetes --dataplane=agent, HTTPS config server), portcullis-agent as a local
 * process with a token of the provisioned ServiceAccount and a real nginx, and echo backends
 * in a network namespace (prefix pcd-, subnet 10.245.0.0/16).
 *
 * Each change creates one new HTTPRoute (3 rules, as the other routes) and polls nginx until
 * the new route answers from its backend. Two clocks:
 *   - api:     from the create request (HTTPS POST to the API server, as kubectl does it) to served;
 *   - kubectl: from spawning `kubectl apply -f -` to served (adds kubectl's own start, ~100+ ms).
 * Goal: p50 under 250 ms including the agent hop (150 ms on one host). Anchor: NGINX Gateway Fabric 2.6
 * publishes 160 ms per change batch at 1,000 HTTPRoutes for its controller alone (before its
 * agent writes files and reloads nginx).
 *
 * --one-host: the routes have no hostnames (one nginx server block, the costliest case for a
 * change), through the API server.
 * --write-docs: also write the figures as docs/benchmarks-gateway.md's table (agent or agent-one-host).
 *
 *   npm run bench:agent [-- --routes=1000 --changes=20 --kubectl-changes=10 --one-host --write-docs]
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as https from 'https';
import * as path from 'path';
import { K8S_TOOLS, startCluster } from '../e2e/support/kube';
import { startNetnsBackends } from '../e2e/support/netns';
import { startController } from '../e2e/support/controller';
import { startAgent, stopAllAgents } from '../e2e/support/agent';
import { makeAgentTls } from '../e2e/support/agent-tls';
import { agentModeArgs, serviceWithEndpoints, writeAgentToken } from '../e2e/support/agent-mode';
import { httpRequest } from '../e2e/support/http';
import { freePort } from '../e2e/support/ports';
import { makeTempDir, removeDir } from '../e2e/support/tmp';
import { toYaml } from '../e2e/support/manifests';
import { HOSTS, routeDoc, SERVICES } from './bench-manifests';
import { benchCommand, docsTable } from './support/bench-docs';
import { cpuMs, nginxCpuMs } from './support/proc-cpu';

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const ROUTES = Number(arg('routes', '1000'));
const CHANGES = Number(arg('changes', '20'));
const KUBECTL_CHANGES = Number(arg('kubectl-changes', '10'));
const ONE_HOST = process.argv.includes('--one-host');
const NS = 'default';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

function route(i: number): Record<string, unknown> {
  const r = routeDoc(i) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  delete r.metadata.creationTimestamp;
  // --one-host: no hostnames, every route on the one hostless listener (one nginx server block).
  if (ONE_HOST) delete r.spec.hostnames;
  return r;
}

type Log = { time?: string; msg: string; [k: string]: unknown };

const at = (l: Log) => Date.parse(l.time ?? '');

/**
 * Per change, the moments the controller and the agent logged (debug level) on its way: the
 * watch event of the new route, the reconcile that built it, the frame sent and received, the
 * reload, and the bench's own probe seeing it served. Each step is a difference of wall clocks
 * (one machine, millisecond log stamps).
 */
function timeline(marks: { i: number; start: number; created: number; served: number }[], controllerLogs: Log[], agentLogs: Log[]): [string, number[]][] {
  const names = ['create request answered', 'controller asked to reconcile (watch event)', 'reconcile started', 'config frame sent (parse, graph, model, render, hash)', 'agent received the frame', 'agent wrote the files, signalled nginx', 'new nginx workers forked', 'new workers answer (apply done)', 'served to the bench probe'];
  const rows: number[][] = names.map(() => []);
  for (const m of marks) {
    // The first reconcile after the create that pushed a new config.
    const sent = controllerLogs.find((l) => l.msg === 'config sent to an agent' && at(l) >= m.start);
    const rec = sent && controllerLogs.find((l) => l.msg === 'reconciled' && at(l) >= at(sent));
    if (!rec || !sent) continue;
    const recv = agentLogs.find((l) => l.msg === 'config received' && l.version === sent.version);
    const applied = agentLogs.find((l) => l.msg === 'configuration applied' && l.version === sent.version);
    const reload = applied && [...agentLogs].reverse().find((l) => l.msg === 'nginx reloaded' && at(l) <= at(applied));
    if (!recv || !applied || !reload) continue;
    const done = at(reload) - Number(reload.drainMs);
    const signalled = done - Number(reload.reloadMs);
    const values = [m.created, at(rec) - Number(rec.ms) - Number(rec.waitMs), at(rec) - Number(rec.ms), at(sent), at(recv), signalled, signalled + Number(reload.forkMs), done, m.served];
    values.forEach((v, k) => rows[k].push(Math.round(v - m.start)));
  }
  return rows[0].length ? names.map((n, k) => [n, rows[k]] as [string, number[]]) : [];
}

/**
 * The controller's API requests so far, from its /metrics: "status writes" and one entry per
 * verb (update, get, list, create, patch...), all status codes together.
 */
async function apiRequests(address: string): Promise<Map<string, number>> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  const res = await httpRequest(port, '/metrics', { timeoutMs: 5000 }, host);
  const out = new Map<string, number>();
  for (const line of res.text.split('\n')) {
    let m = /^portcullis_controller_status_writes_total (\S+)/.exec(line);
    if (m) out.set('status writes', Number(m[1]));
    m = /^portcullis_controller_api_requests_total\{([^}]*)\} (\S+)/.exec(line);
    const verb = m && /verb="([^"]+)"/.exec(m[1]);
    if (m && verb) out.set(verb[1], (out.get(verb[1]) ?? 0) + Number(m[2]));
  }
  return out;
}

async function main(): Promise<void> {
  const dir = await makeTempDir('pcd-bench-');
  const cluster = await startCluster();
  const backends = await startNetnsBackends(['echo'], { prefix: 'pcd-', subnet: '10.245' });
  const env = cluster.env;
  try {
    const tls = makeAgentTls(dir);
    const port = await freePort();
    const agentPort = await freePort();
    const agentUrl = `https://127.0.0.1:${agentPort}`;
    const base: Record<string, unknown>[] = [
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'portcullis' }, spec: { controllerName: 'gateway.portcullis.dev/controller' } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port, protocol: 'HTTP' }] } },
    ];
    for (let s = 0; s < SERVICES; s++) {
      base.push(...serviceWithEndpoints({ name: `svc-${s}`, namespace: NS, address: backends.address, targetPort: backends.ports.echo, managedBy: 'bench' }));
    }
    await cluster.apply(base);
    const t0 = Date.now();
    for (let i = 0; i < ROUTES; i += 250) {
      await cluster.apply(Array.from({ length: Math.min(250, ROUTES - i) }, (_, k) => route(i + k)), ['--server-side']);
    }
    process.stdout.write(`created ${ROUTES} HTTPRoutes in ${Date.now() - t0} ms\n`);

    const controllerArgs = await agentModeArgs({ agentPort, agentUrl, tls, image: 'portcullis/nginx:bench' });
    const controller = await startController({
      manifestsDir: dir,
      stateDir: path.join(dir, 'controller'),
      kubeconfig: cluster.kubeconfig,
      dataplane: 'agent',
      logLevel: 'info',
      args: controllerArgs,
    });
    try {
      // The metrics endpoint listens on port 0 (a port picked here could be taken meanwhile).
      const metricsAddress = `127.0.0.1:${await controller.boundPort('metrics')}`;
      // The ServiceAccount appears when the controller has provisioned the Gateway.
      const tokenFile = await writeAgentToken(cluster, { namespace: NS, serviceAccount: 'gw-portcullis', file: path.join(dir, 'token'), timeoutMs: 60000 });
      const agent = startAgent({ server: agentUrl, gateway: `${NS}/gw`, tokenFile, caFile: tls.ca, prefix: path.join(dir, 'pod'), listenAddress: '127.0.0.1', healthPort: await freePort(), podName: 'bench-pod' });
      const probe = async (i: number) =>
        (await httpRequest(port, `/r${i}/api?tenant=t${i % 7}`, { host: `app-${i % HOSTS}.example.test`, timeoutMs: 2000 }).catch(() => ({ status: 0 }))).status;
      const tServe = Date.now();
      while ((await probe(ROUTES - 1)) !== 200) {
        if (Date.now() - tServe > 180000) throw new Error(`route ${ROUTES - 1} not served after 180 s`);
        await sleep(50);
      }
      process.stdout.write(`agent serving all ${ROUTES} routes ${Date.now() - tServe} ms after it started\n`);
      // The first statuses of every route are written after that (8 at a time): measuring before
      // they are all out would count them, and their CPU, against the changes.
      const tSettle = Date.now();
      let writes = -1;
      for (;;) {
        await sleep(1000);
        const now = (await apiRequests(metricsAddress)).get('status writes') ?? 0;
        if (now === writes) break;
        writes = now;
        if (Date.now() - tSettle > 180000) throw new Error('status writes still going on after 180 s');
      }
      process.stdout.write(`first statuses written (${writes} status writes) ${Date.now() - tSettle} ms later\n`);

      const waitServed = async (i: number, start: number) => {
        for (;;) {
          if ((await probe(i)) === 200) return Date.now() - start;
          if (Date.now() - start > 30000) throw new Error(`route ${i} not served after 30 s`);
          await sleep(2);
        }
      };
      const api = new URL(cluster.server);
      const ca = fs.readFileSync(env.K8S_CA_FILE!);
      const create = (doc: Record<string, unknown>) =>
        new Promise<void>((resolve, reject) => {
          const body = JSON.stringify(doc);
          const req = https.request(
            { host: api.hostname, port: api.port, method: 'POST', path: `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`, ca, headers: { authorization: `Bearer ${env.K8S_ADMIN_TOKEN}`, 'content-type': 'application/json' } },
            (res) => {
              res.resume();
              res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`create: HTTP ${res.statusCode}`))));
            },
          );
          req.on('error', reject);
          req.setTimeout(10000, () => req.destroy(new Error('create: no answer from the API server in 10 s')));
          req.end(body);
        });
      // CPU time of each part over the changes: on a machine shared with other work the wall
      // times above swing with the load, the CPU a change costs each process much less.
      const nginxPid = Number(fs.readFileSync(path.join(dir, 'pod', 'run', 'nginx.pid'), 'utf8').trim());
      const cpuBefore = { controller: cpuMs(controller.child.pid!), agent: cpuMs(agent.child.pid!), nginx: nginxCpuMs(nginxPid) };
      const apiBefore = await apiRequests(metricsAddress);
      const apiTimes: number[] = [];
      const marks: { i: number; start: number; created: number; served: number }[] = [];
      for (let k = 0; k < CHANGES; k++) {
        const i = ROUTES + k;
        const start = Date.now();
        await create(route(i));
        const created = Date.now();
        if (process.env.BENCH_DEBUG) process.stderr.write(`created route ${i} after ${created - start} ms\n`);
        const ms = await waitServed(i, start);
        apiTimes.push(ms);
        marks.push({ i, start, created, served: start + ms });
        await sleep(300);
      }
      const cpuAfter = { controller: cpuMs(controller.child.pid!), agent: cpuMs(agent.child.pid!), nginx: nginxCpuMs(nginxPid) };
      // Settle: the status writes and agent reports of the last change may still be under way.
      await sleep(1500);
      const apiAfter = await apiRequests(metricsAddress);
      const kubectlTimes: number[] = [];
      for (let k = 0; k < KUBECTL_CHANGES; k++) {
        const i = ROUTES + CHANGES + k;
        const start = Date.now();
        const child = spawn(path.join(K8S_TOOLS, 'bin', 'kubectl'), ['apply', '-f', '-'], { env, stdio: ['pipe', 'ignore', 'inherit'] });
        const exited = new Promise((r) => child.once('exit', r));
        child.stdin.end(toYaml([route(i)]));
        kubectlTimes.push(await waitServed(i, start));
        await exited;
        await sleep(300);
      }
      const applies = agent.logs.filter((l) => l.msg === 'configuration applied').slice(-(CHANGES + KUBECTL_CHANGES)).map((l) => Number(l.ms));
      const line = (name: string, xs: number[]) => `${name.padEnd(34)} p50 ${String(pct(xs, 50)).padStart(5)} ms   p90 ${String(pct(xs, 90)).padStart(5)} ms   (n=${xs.length})`;
      process.stdout.write(`\nchange-to-serving at ${ROUTES} HTTPRoutes${ONE_HOST ? ' on one host' : ''} (API server -> controller -> agent -> nginx), load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
      process.stdout.write(`${line('create request -> served', apiTimes)}\n`);
      if (kubectlTimes.length) process.stdout.write(`${line('kubectl apply spawned -> served', kubectlTimes)}\n`);
      if (applies.length) process.stdout.write(`${line('  of which the agent apply', applies)}\n`);
      // Where the time goes: the controller's reconciles during the changes (phases as it logs
      // them; "render" is the per-Gateway model build and the push to the agents) and the
      // agent's nginx steps (partial nginx -t, reload until the new workers answer, handover).
      const med = (xs: number[]) => pct(xs, 50);
      const recs = controller.logs.filter((l) => l.msg === 'reconciled').slice(-2 * (CHANGES + KUBECTL_CHANGES));
      if (recs.length) {
        const phases = Object.keys((recs[0].phases as Record<string, number>) ?? {});
        process.stdout.write(`  controller reconcile medians: total ${med(recs.map((r) => Number(r.ms)))} ms; ${phases.map((k) => `${k} ${med(recs.map((r) => Number((r.phases as Record<string, number>)[k])))}`).join(', ')} (n=${recs.length}, agent reports included)\n`);
      }
      const reloads = agent.logs.filter((l) => l.msg === 'nginx reloaded').slice(-(CHANGES + KUBECTL_CHANGES));
      if (reloads.length) process.stdout.write(`  agent nginx medians: write ${med(reloads.map((l) => Number(l.checkMs)))} ms, reload ${med(reloads.map((l) => Number(l.reloadMs)))} ms (new workers forked after ${med(reloads.map((l) => Number(l.forkMs)))} ms), drain ${med(reloads.map((l) => Number(l.drainMs)))} ms\n`);
      const per = (k: keyof typeof cpuBefore) => ((cpuAfter[k] - cpuBefore[k]) / Math.max(1, CHANGES)).toFixed(0);
      process.stdout.write(`  CPU per change (user+system, over the ${CHANGES} API changes, status writes and reports included): controller ${per('controller')} ms, agent ${per('agent')} ms, nginx (master + workers) ${per('nginx')} ms\n`);
      const perChange = (k: string) => (((apiAfter.get(k) ?? 0) - (apiBefore.get(k) ?? 0)) / Math.max(1, CHANGES)).toFixed(2);
      const verbs = [...new Set([...apiAfter.keys()].filter((k) => k !== 'status writes'))].filter((k) => perChange(k) !== '0.00');
      process.stdout.write(`  controller API requests per change (metrics, ${CHANGES} API changes; watch streams not counted): status writes ${perChange('status writes')}${verbs.map((v) => `, ${v} ${perChange(v)}`).join('')} (get + update include the leader election's Lease read and renewal every 2 s)\n`);
      const steps = timeline(marks, controller.logs, agent.logs);
      if (steps.length) {
        process.stdout.write(`  where the time goes (medians over ${marks.length} changes, from the create request; log clocks in ms):\n`);
        for (const [name, xs] of steps) process.stdout.write(`    ${name.padEnd(52)} ${String(med(xs)).padStart(5)} ms\n`);
      }
      const goal = ONE_HOST ? 150 : 250;
      process.stdout.write(`goal: p50 < ${goal} ms; ratio to goal ${(pct(apiTimes, 50) / goal).toFixed(2)}\n`);
      process.stdout.write(`anchor: NGINX Gateway Fabric 2.6, 160 ms avg per change batch at 1,000 HTTPRoutes (controller only, before its agent and reload); ours end to end / theirs controller-only = ${(pct(apiTimes, 50) / 160).toFixed(2)}\n`);
      const p = (xs: number[]) => (xs.length ? `${pct(xs, 50)} / ${pct(xs, 90)} ms` : 'not measured');
      docsTable({
        doc: 'gateway',
        id: ONE_HOST ? 'agent-one-host' : 'agent',
        command: benchCommand('bench:agent'),
        columns: ['figure', 'Portcullis', 'goal', 'anchor'],
        rows: [
          [`create request -> served p50 / p90 (${ROUTES} routes${ONE_HOST ? ', one host' : ''})`, p(apiTimes), `p50 < ${goal} ms`, 'NGF 2.6: 160 ms per change batch at 1,000 routes (its controller alone)'],
          ['kubectl apply spawned -> served p50 / p90', p(kubectlTimes), '', ''],
          ['agent apply p50 / p90', p(applies), '', ''],
          ['nginx reload median', reloads.length ? `${med(reloads.map((l) => Number(l.reloadMs)))} ms` : 'not measured', '', ''],
          ['CPU per change: controller / agent / nginx', `${per('controller')} / ${per('agent')} / ${per('nginx')} ms`, '', ''],
          ['status writes per change', perChange('status writes'), '', ''],
        ],
      });
      await agent.stop();
    } finally {
      await controller.stop();
    }
  } finally {
    await stopAllAgents();
    await backends.close();
    await cluster.stop();
    await removeDir(dir);
  }
}

// Exit once stdout is flushed (a pipe is written asynchronously).
main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (err) => {
    process.stderr.write(`bench:agent failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
