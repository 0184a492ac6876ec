/**
 * The official Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance, the version
 * conformance/go.mod pins, unmodified) against Portcullis installed with helm on a cluster that
 * runs pods (scripts/conformance.sh: scripts/k8s-node + charts/portcullis), profiles GATEWAY-HTTP,
 * GATEWAY-GRPC, GATEWAY-TLS, GATEWAY-TCP and GATEWAY-UDP, features as the GatewayClass publishes them. One jest test per suite test
 * that ran, so each counts in the totals; tests of features the GatewayClass does not claim are
 * skipped by the suite and not listed.
 *
 * The suite runs once while jest collects this file (its tests are only known once it ran):
 * about 3 minutes for the cluster and the install, 3-5 for the suite. Needs root (the node's
 * network and cgroups) and the tools scripts/install.sh builds; without them the one test that
 * says the suite ran fails, with the script's last lines.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const repo = path.resolve(__dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-conformance-'));
const report = path.join(dir, 'report.yaml');
const clusterDir = path.join(dir, 'cluster');
const started = Date.now();
const suiteArgs = process.env.SUITE_ARGS ?? '';
const run = spawnSync('bash', [path.join(repo, 'scripts/conformance.sh'), report], {
  cwd: repo,
  env: { ...process.env, CLUSTER_DIR: clusterDir, SUITE_ARGS: suiteArgs },
  encoding: 'utf8',
  timeout: 45 * 60 * 1000,
  maxBuffer: 64 * 1024 * 1024,
});
const seconds = Math.round((Date.now() - started) / 1000);
const suiteLog = fs.existsSync(path.join(clusterDir, 'suite.log')) ? fs.readFileSync(path.join(clusterDir, 'suite.log'), 'utf8') : '';

/** Top-level results: "    --- PASS: TestConformance/Name (1.23s)". */
const results = new Map<string, 'PASS' | 'FAIL'>();
for (const m of suiteLog.matchAll(/^ {4}--- (PASS|FAIL): TestConformance\/([^/\s]+) /gm)) results.set(m[2], m[1] as 'PASS' | 'FAIL');

/** The last log lines of one test and its subtests (go test -v interleaves parallel tests under headers). */
function linesOf(name: string): string {
  const own: string[] = [];
  let current = '';
  for (const line of suiteLog.split('\n')) {
    const header = /^=== (?:RUN|CONT|NAME|PAUSE)\s+TestConformance\/([^/\s]+)/.exec(line);
    if (header) current = header[1];
    else if (current === name && line.trim()) own.push(line);
  }
  return own.slice(-40).join('\n');
}

describe(`Gateway API conformance suite (GATEWAY-HTTP, GATEWAY-GRPC, GATEWAY-TLS, GATEWAY-TCP, GATEWAY-UDP; ${seconds} s with the cluster)`, () => {
  test('the suite ran against the chart-installed controller and wrote its report', () => {
    if (results.size === 0 || !fs.existsSync(report)) {
      const tail = `${run.stdout ?? ''}\n${run.stderr ?? ''}`.split('\n').slice(-30).join('\n');
      throw new Error(`scripts/conformance.sh exited ${run.status ?? run.error?.message} before the suite's results:\n${tail}`);
    }
    const text = fs.readFileSync(report, 'utf8');
    expect(text).toMatch(/name: GATEWAY-HTTP/);
    expect(text).toMatch(/name: GATEWAY-GRPC/);
    for (const profile of ['GATEWAY-TLS', 'GATEWAY-TCP', 'GATEWAY-UDP']) expect(text).toContain(`name: ${profile}`);
  });

  for (const [name, result] of results) {
    test(name, () => {
      expect({ name, result, log: result === 'PASS' ? '' : linesOf(name) }).toEqual({ name, result: 'PASS', log: '' });
    });
  }
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});
