#!/usr/bin/env node
/**
 * `npm start`, the main job: the gateway controller in standalone mode on examples/, in front
 * of the forge API and two small echo backends, all on loopback.
 *
 *   gateway (nginx)   127.0.0.1:8080   examples/gateway.yaml
 *   forge API         127.0.0.1:3000   npx portcullis-forge serve (FORGE_PORT)
 *   echo-stable       127.0.0.1:9091   examples/echo.yaml
 *   echo-canary       127.0.0.1:9092
 *
 * State (nginx prefix, status.yaml, resource generations, the forge's SQLite and git data) is
 * kept in ./.state. Ctrl-C or SIGTERM stops everything.
 */
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const STATE_DIR = path.resolve(process.env.PORTCULLIS_STATE_DIR || path.join(ROOT, '.state'));
const EXAMPLES = path.join(ROOT, 'examples');
const GATEWAY_PORT = 8080; // examples/gateway.yaml
const FORGE_PORT = Number(process.env.FORGE_PORT || 3000); // examples/forge.yaml
const ECHO_BACKENDS = [
  { name: 'echo-stable', port: 9091 },
  { name: 'echo-canary', port: 9092 },
];

const children = [];
const servers = [];
let stopping = false;

function say(line) {
  process.stdout.write(line + '\n');
}

/** An echo backend: answers every request with its name and the request it saw. */
function startEcho({ name, port }) {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      const url = new URL(req.url || '/', 'http://x');
      const body = JSON.stringify(
        { backend: name, method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers },
        null,
        2,
      );
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo-backend': name });
      res.end(body + '\n');
    });
    server.once('error', (err) => reject(new Error(`${name} cannot listen on 127.0.0.1:${port}: ${err.message}`)));
    server.listen(port, '127.0.0.1', () => {
      servers.push(server);
      resolve();
    });
  });
}

/** Starts a child with its output prefixed, so the three logs stay readable together. */
function startChild(label, args, env) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream, out) => {
    let buf = '';
    stream.on('data', (chunk) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        out.write(`[${label}] ${buf.slice(0, nl)}\n`);
        buf = buf.slice(nl + 1);
      }
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      say(`${label} exited (${signal || code}); stopping everything`);
      void stopAll(1);
    }
  });
  children.push({ label, child });
  return child;
}

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function gatewayProgrammed() {
  const file = path.join(STATE_DIR, 'status.yaml');
  if (!fs.existsSync(file)) return false;
  const YAML = require('yaml');
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS());
  const gw = docs.find((d) => d && d.kind === 'Gateway' && d.metadata.name === 'portcullis');
  const programmed = gw && (gw.status.conditions || []).find((c) => c.type === 'Programmed');
  if (programmed && programmed.status !== 'True') {
    throw new Error(`Gateway not programmed: ${programmed.reason}: ${programmed.message}`);
  }
  return !!programmed;
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  say('stopping...');
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', resolve);
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 10000).unref();
        }),
    ),
  );
  await Promise.all(servers.map((s) => new Promise((resolve) => (s.closeAllConnections(), s.close(resolve)))));
  process.exit(code);
}

async function main() {
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  fs.mkdirSync(STATE_DIR, { recursive: true });

  for (const backend of ECHO_BACKENDS) await startEcho(backend);
  say(`echo backends: ${ECHO_BACKENDS.map((b) => `${b.name} 127.0.0.1:${b.port}`).join(', ')}`);

  const forgeCli = path.join(ROOT, 'forge-api', 'src', 'cli.ts');
  const haveForge = fs.existsSync(forgeCli);
  if (haveForge) {
    startChild('forge', [path.join(ROOT, 'bin', 'portcullis-forge.js'), 'serve'], {
      FORGE_PORT: String(FORGE_PORT),
      FORGE_DATA_DIR: process.env.FORGE_DATA_DIR || path.join(STATE_DIR, 'forge'),
      // Behind the gateway: reachable on loopback only, and the URLs it writes into its JSON
      // (html_url, clone_url) point at the gateway that fronts it.
      FORGE_HOST: process.env.FORGE_HOST || '127.0.0.1',
      ROOT_URL: process.env.ROOT_URL || `http://127.0.0.1:${GATEWAY_PORT}/`,
    });
  } else {
    say('forge-api/src/cli.ts is not there yet: the forge is not started (its routes answer 502)');
  }

  startChild('controller', [
    path.join(ROOT, 'bin', 'portcullis-controller.js'),
    '--provider=file',
    `--manifests=${EXAMPLES}`,
    `--state-dir=${STATE_DIR}`,
    '--listen-address=127.0.0.1',
    `--log-level=${process.env.LOG_LEVEL || 'info'}`,
  ]);

  await waitFor(gatewayProgrammed, 60000, 'the Gateway to be Programmed (status.yaml)');
  if (haveForge) {
    await waitFor(
      () =>
        new Promise((resolve) => {
          http.get({ host: '127.0.0.1', port: FORGE_PORT, path: '/api/v1/version', agent: false }, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          }).on('error', () => resolve(false));
        }),
      60000,
      'the forge API',
    ).catch((err) => say(`warning: ${err.message}`));
  }

  const gw = `http://127.0.0.1:${GATEWAY_PORT}`;
  say('');
  say(`Portcullis is up. The gateway listens on ${gw}; statuses in ${path.relative(ROOT, STATE_DIR) || '.'}/status.yaml`);
  say('Try:');
  say(`  curl ${gw}/api/v1/version                       # forge API through the gateway`);
  say(`  curl ${gw}/swagger.v1.json | head -c 300         # the forge's OpenAPI document`);
  say(`  curl ${gw}/echo/hello                            # -> echo-stable`);
  say(`  curl -H 'X-Canary: true' ${gw}/echo/hello        # header match -> echo-canary`);
  say(`  curl '${gw}/echo/hello?canary=1'                 # query match -> echo-canary`);
  say(`  curl -X POST ${gw}/echo/orders                   # method match -> echo-canary`);
  say(`  curl ${gw}/echo/orders                           # GET -> echo-stable`);
  say(`  for i in $(seq 10); do curl -s ${gw}/split | grep backend; done   # 80/20 split`);
  say(`  curl -H 'Host: echo.localhost' ${gw}/anything    # hostname route -> echo-canary`);
  say(`  curl -i ${gw}/nowhere                            # no route: 404`);
  say(`Edit examples/*.yaml and the gateway follows; Ctrl-C stops everything.`);
}

main().catch((err) => {
  process.stderr.write(`npm start: ${err.message}\n`);
  void stopAll(1);
});
