/** The command line itself: help, usage errors, start-up failures reported with an exit code. */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from '../support/controller';

const BIN = path.join(REPO_ROOT, 'bin', 'portcullis-controller.js');
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30000 });

test('--help prints the usage and exits 0', () => {
  const r = run('--help');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/--provider=file --manifests=DIR --state-dir=DIR/);
  expect(r.stdout).toMatch(/--listen-address/);
});

test('a missing required option is a usage error naming it', () => {
  const r = run('--provider=file', '--state-dir=/tmp/x');
  expect(r.status).toBe(64);
  expect(r.stderr).toMatch(/--manifests=DIR is required/);
});

test('an unknown option is a usage error', () => {
  const r = run('--provider=file', '--manifest=x', '--state-dir=y');
  expect(r.status).toBe(64);
  expect(r.stderr).toMatch(/unknown option --manifest/);
});

test('--provider=kubernetes with the local data plane needs --state-dir (usage error)', () => {
  const r = run('--provider=kubernetes', '--dataplane=local');
  expect(r.status).toBe(64);
  expect(r.stderr).toMatch(/--state-dir=DIR is required with --dataplane=local/);
});

test('--provider=kubernetes with a kubeconfig that does not exist is reported, exit code 1', () => {
  const os = require('os') as typeof import('os');
  const r = run('--provider=kubernetes', '--kubeconfig=/nonexistent/kubeconfig', `--state-dir=${path.join(os.tmpdir(), 'pc-cli-k')}`, '--health-address=127.0.0.1:0', '--metrics-address=127.0.0.1:0');
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/controller failed/);
  expect(r.stderr).toMatch(/nonexistent\/kubeconfig/);
});

test('a manifests folder that does not exist is reported, exit code 1', () => {
  const r = run('--provider=file', '--manifests=/nonexistent/portcullis', `--state-dir=${path.join(require('os').tmpdir(), 'pc-cli-x')}`);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/not a directory/);
});

test('an nginx binary that does not exist is reported, exit code 1', () => {
  const os = require('os') as typeof import('os');
  const r = run('--provider=file', `--manifests=${path.join(REPO_ROOT, 'examples')}`, `--state-dir=${path.join(os.tmpdir(), 'pc-cli-y')}`, '--nginx=/nonexistent/nginx');
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/nginx binary \/nonexistent\/nginx not found/);
  require('fs').rmSync(path.join(os.tmpdir(), 'pc-cli-y'), { recursive: true, force: true });
});
