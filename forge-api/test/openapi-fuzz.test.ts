/**
 * An OpenAPI fuzzer against the forge's own document: schemathesis (installed by
 * scripts/install.sh into a virtualenv under ~/.cache/portcullis-schemathesis) generates
 * requests for every operation of /swagger.v1.json, valid and invalid, with NULs, surrogates
 * and huge numbers among them, authenticated as a site admin, and fails on any 5xx. The number
 * of examples per operation is bounded to keep the run short. Skipped, with a warning, where
 * schemathesis is not installed (run scripts/install.sh).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { describeForge, PASSWORD } from './support/forge';

const SCHEMATHESIS = path.join(process.env.SCHEMATHESIS_HOME ?? path.join(os.homedir(), '.cache', 'portcullis-schemathesis'), 'venv', 'bin', 'schemathesis');
const installed = fs.existsSync(SCHEMATHESIS);
if (!installed) console.warn(`schemathesis is not installed at ${SCHEMATHESIS}: the OpenAPI fuzz test is skipped (scripts/install.sh installs it)`);

/** Examples per operation: enough to hit every field with a few hostile values, small enough for CI. */
const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 4);
/** Concurrent schemathesis workers: most operations wait on git or the database, not on CPU. */
const WORKERS = process.env.FUZZ_WORKERS ?? '4';

jest.setTimeout(600_000);

if (!installed) describe.skip('OpenAPI fuzzing finds no 5xx (schemathesis not installed)', () => test.todo('install schemathesis'));
else describeForge('OpenAPI fuzzing finds no 5xx', (f) => {
  test(`schemathesis, ${MAX_EXAMPLES} examples per operation, no server error`, async () => {
    await f().user('fuzzroot', { admin: true });
    await f().user('alice');
    const admin = { basic: ['fuzzroot', PASSWORD] as [string, string] };
    expect((await f().request('POST', '/user/repos', { basic: ['alice', PASSWORD], body: { name: 'r', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/r/issues', { ...admin, body: { title: 'fuzz' } })).status).toBe(201);
    // Token as the basic user name: no key derivation per request, and the token routes
    // (basic only) are reached too.
    const token = await f().token('fuzzroot', ['all']);
    const report = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-'));
    try {
      const run = await execa(
        SCHEMATHESIS,
        [
          'run',
          `${f().url}/swagger.v1.json`,
          '--checks', 'not_a_server_error',
          '--max-examples', String(MAX_EXAMPLES),
          '--phases', 'examples,coverage,fuzzing',
          '--generation-deterministic',
          '--request-timeout', '20',
          '--workers', WORKERS,
          '--auth', `${token}:`,
          // Deleting the fuzzing user or renaming it would only end the run early.
          '--exclude-operation-id', 'adminDeleteUser',
          '--exclude-operation-id', 'adminRenameUser',
          '--report', 'junit',
          '--report-dir', report,
        ],
        // Run in the temporary folder: schemathesis keeps a cache (.schemathesis/) in its working directory.
        { reject: false, all: true, cwd: report, env: { SCHEMATHESIS_HOOKS: '', NO_COLOR: '1' } },
      );
      const out = run.all ?? '';
      // The verdict is the check's: a server error is a JUnit <failure>. Operations whose
      // schema schemathesis cannot generate from are <error>s of the document, reported but
      // not a server fault.
      const junit = fs.readdirSync(report).filter((n) => n.endsWith('.xml')).map((n) => fs.readFileSync(path.join(report, n), 'utf8')).join('\n');
      const failures = [...junit.matchAll(/<testcase[^>]*name="([^"]*)"[^>]*>\s*<failure[^>]*message="([^"]*)"/g)].map((m) => `${m[1]}: ${m[2].slice(0, 200)}`);
      if (failures.length) console.log(out.split('\n').slice(-80).join('\n'));
      // The slowest operations, so a run that nears the time limit says where the time goes.
      const slowest = [...junit.matchAll(/<testcase[^>]*name="([^"]*)"[^>]*time="([\d.]+)"/g)].map((m) => ({ name: m[1], s: Number(m[2]) })).sort((a, b) => b.s - a.s).slice(0, 8);
      if (process.env.FUZZ_TIMES) console.log(slowest.map((t) => `${t.s.toFixed(1)} s ${t.name}`).join('\n'));
      expect(out).toMatch(/Test cases:\s+\d+ generated/);
      expect(junit).toContain('<testsuite');
      expect(failures).toEqual([]);
      expect(out).not.toMatch(/Server error/);
    } finally {
      fs.rmSync(report, { recursive: true, force: true });
    }
  });
});
