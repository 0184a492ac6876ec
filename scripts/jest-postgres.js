// jest globalSetup/globalTeardown: gives `npm test` a throwaway PostgreSQL cluster on a free
// loopback port, so the forge suites run on PostgreSQL as well as SQLite with no manual step.
// Skipped when PG_TEST_URL is already set (use that server) or PostgreSQL is not installed.
// Also gives the run one directory (PORTCULLIS_TEST_RUN_DIR) for what its workers share, such
// as the migrated SQLite template the forge suites copy (forge-api/test/support/forge.ts).
const fs = require('fs');
const os = require('os');
const path = require('path');
const net = require('net');
const { execFileSync } = require('child_process');

function pgBinDir() {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// initdb refuses to run as root: run the server binaries as the postgres user then.
function asPostgres(cmd, args) {
  if (process.getuid && process.getuid() === 0) return execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' });
  return execFileSync(cmd, args, { stdio: 'pipe' });
}

async function setup() {
  if (!process.env.PORTCULLIS_TEST_RUN_DIR) {
    process.env.PORTCULLIS_TEST_RUN_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-run-'));
    process.env.PORTCULLIS_TEST_RUN_DIR_OWNED = '1';
  }
  if (process.env.PG_TEST_URL) return;
  const bin = pgBinDir();
  if (!bin) {
    console.warn('PostgreSQL is not installed: PostgreSQL suites are skipped (scripts/install.sh installs it).');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-pg-'));
  fs.chmodSync(dir, 0o777);
  if (process.getuid && process.getuid() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const port = await freePort();
  asPostgres(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  asPostgres(path.join(bin, 'pg_ctl'), ['-D', path.join(dir, 'data'), '-l', path.join(dir, 'log'), '-w', 'start',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=300`]);
  process.env.PG_TEST_URL = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  process.env.PORTCULLIS_TEST_PG_DIR = dir;
  process.env.PORTCULLIS_TEST_PG_BIN = bin;
}

async function teardown() {
  if (process.env.PORTCULLIS_TEST_RUN_DIR_OWNED) fs.rmSync(process.env.PORTCULLIS_TEST_RUN_DIR, { recursive: true, force: true });
  const dir = process.env.PORTCULLIS_TEST_PG_DIR;
  if (!dir) return;
  try {
    asPostgres(path.join(process.env.PORTCULLIS_TEST_PG_BIN, 'pg_ctl'), ['-D', path.join(dir, 'data'), '-m', 'fast', 'stop']);
  } catch { /* already gone */ }
  fs.rmSync(dir, { recursive: true, force: true });
}

module.exports = { setup, teardown };
