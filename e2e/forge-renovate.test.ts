/**
 * The real Renovate (npm `renovate`, platform gitea, token auth) against a listening forge, as
 * a user runs it from CI, with npm lookups answered by a local registry fixture: the onboarding
 * PR, then after it is merged the dependency PRs with their branches, titles and bodies, the
 * Dependency Dashboard issue, platform automerge (a merge scheduled by the bot and done by the
 * forge once the required CI status succeeds), and a third run that updates the open PR for a
 * newer version, opens nothing twice and does not reopen the merged PR. One forge (SQLite) and
 * three Renovate runs: the database paths of the same routes are covered by the forge suites.
 */
import path from 'node:path';
import { startForge, PASSWORD, type Forge } from '../forge-api/test/support/forge';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry';
import { runRenovate, type RenovateRun } from './support/renovate';
import { makeTempDir, removeDir } from './support/tmp';
import { eventually } from './support/http';

const R = '/repos/alice/app';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString();
// A Renovate run takes 15-30 s alone and several times that beside other suites on CI's 2 cores.
jest.setTimeout(360_000);

describe('Renovate against the forge', () => {
  let forge: Forge;
  let registry: NpmRegistry;
  let dir: string;
  let botToken: string;
  let runs = 0;
  const alice = { basic: ['alice', PASSWORD] as [string, string] };

  const renovate = async (): Promise<RenovateRun> => {
    const run = await runRenovate({ endpoint: forge.url, token: botToken, repository: 'alice/app', registry: registry.url, baseDir: path.join(dir, `run-${++runs}`) });
    // What a user reads at the end of a run: exit 0 and no error; warnings are shown on failure.
    expect({ code: run.code, errors: run.problems.filter((p) => p.startsWith('ERROR')) }).toEqual({ code: 0, errors: [] });
    return run;
  };
  const pulls = async () => (await forge.request('GET', `${R}/pulls?state=all&limit=50`, alice)).body as any[];
  const file = async (p: string, ref: string) => unb64((await forge.request('GET', `${R}/contents/${p}?ref=${encodeURIComponent(ref)}`, alice)).body.content);
  const put = async (p: string, text: string, message: string) => {
    const cur = await forge.request('GET', `${R}/contents/${p}`, alice);
    const res = await forge.request(cur.status === 200 ? 'PUT' : 'POST', `${R}/contents/${p}`, { ...alice, body: { content: b64(text), message, ...(cur.status === 200 ? { sha: cur.body.sha } : {}) } });
    expect(res.status).toBe(cur.status === 200 ? 200 : 201);
  };
  const ciStatus = async (sha: string, state: string) => expect((await forge.request('POST', `${R}/statuses/${sha}`, { ...alice, body: { context: 'ci/test', state } })).status).toBe(201);

  beforeAll(async () => {
    dir = await makeTempDir('portcullis-renovate-');
    [forge, registry] = await Promise.all([startForge('sqlite'), startNpmRegistry()]);
    registry.publish('left-pad', ['1.0.0', '1.1.0', '1.3.0']);
    registry.publish('tiny-lib', ['1.0.0', '2.0.0']);
    await forge.user('alice');
    await forge.user('renovate-bot');
    botToken = await forge.token('renovate-bot', ['write:repository', 'write:issue', 'read:user', 'read:organization', 'read:misc']);
    expect((await forge.request('POST', '/user/repos', { ...alice, body: { name: 'app', auto_init: true } })).status).toBe(201);
    expect((await forge.request('PUT', `${R}/collaborators/renovate-bot`, { ...alice, body: { permission: 'write' } })).status).toBe(204);
    await put('package.json', `${JSON.stringify({ name: 'app', version: '1.0.0', dependencies: { 'left-pad': '1.0.0', 'tiny-lib': '1.0.0' } }, null, 2)}\n`, 'add package.json');
  });

  afterAll(async () => {
    await forge?.close();
    await registry?.close();
    await removeDir(dir);
  });

  test('first run: the onboarding PR, from renovate/configure, with the PRs to expect', async () => {
    await renovate();
    const [pr, ...others] = await pulls();
    expect(others).toEqual([]);
    expect(pr).toMatchObject({ number: 1, title: 'Configure Renovate', state: 'open', user: { login: 'renovate-bot' }, head: { ref: 'renovate/configure' }, base: { ref: 'main' }, mergeable: true });
    expect(pr.body).toContain('Welcome to [Renovate]');
    expect(pr.body).toContain(' * `package.json` (npm)');
    expect(pr.body).toContain('Update dependency left-pad to v1.3.0');
    expect(pr.body).toContain('Branch name: `renovate/tiny-lib-2.x`');
    expect(JSON.parse(await file('renovate.json', 'renovate/configure'))).toEqual({ $schema: 'https://docs.renovatebot.com/renovate-schema.json' });
  });

  test('onboarding merged, automerge configured: dependency PRs and the dashboard; the automerged one merges once CI is green', async () => {
    expect((await forge.request('POST', `${R}/pulls/1/merge`, { ...alice, body: { Do: 'merge' } })).status).toBe(200);
    await put('renovate.json', `${JSON.stringify({ extends: ['config:recommended'], dependencyDashboard: true, packageRules: [{ matchPackageNames: ['left-pad'], automerge: true }] }, null, 2)}\n`, 'automerge left-pad');
    expect((await forge.request('POST', `${R}/branch_protections`, { ...alice, body: { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/test'] } })).status).toBe(201);

    await renovate();
    const open = (await pulls()).filter((p) => p.state === 'open');
    const byBranch = Object.fromEntries(open.map((p) => [p.head.ref, p]));
    expect(Object.keys(byBranch).sort()).toEqual(['renovate/left-pad-1.x', 'renovate/tiny-lib-2.x']);
    const leftPad = byBranch['renovate/left-pad-1.x'];
    const tiny = byBranch['renovate/tiny-lib-2.x'];
    expect(leftPad).toMatchObject({ title: 'Update dependency left-pad to v1.3.0', user: { login: 'renovate-bot' }, base: { ref: 'main' } });
    expect(leftPad.body).toContain('| [left-pad](https://example.invalid/left-pad.git) | [`1.0.0` → `1.3.0`]');
    expect(leftPad.body).toContain('**Automerge**: Enabled.');
    expect(tiny).toMatchObject({ title: 'Update dependency tiny-lib to v2' });
    expect(tiny.body).toContain('**Automerge**: Disabled by config.');
    expect(JSON.parse(await file('package.json', 'renovate/left-pad-1.x')).dependencies).toEqual({ 'left-pad': '1.3.0', 'tiny-lib': '1.0.0' });

    // Platform automerge: the bot scheduled the merge; the rule's required status is missing.
    const timeline = (await forge.request('GET', `${R}/issues/${leftPad.number}/timeline`, alice)).body.map((e: any) => `${e.type} ${e.user.login}`);
    expect(timeline).toContain('pull_scheduled_merge renovate-bot');
    const dashboard = (await forge.request('GET', `${R}/issues?type=issues&state=open`, alice)).body;
    expect(dashboard).toMatchObject([{ title: 'Dependency Dashboard', user: { login: 'renovate-bot' } }]);
    expect(dashboard[0].body).toContain('renovate/tiny-lib-2.x');

    await ciStatus(leftPad.head.sha, 'pending');
    await ciStatus(leftPad.head.sha, 'success');
    const merged = await eventually(async () => (await forge.request('GET', `${R}/pulls/${leftPad.number}`, alice)).body, (p) => p.merged, 30000);
    expect(merged).toMatchObject({ state: 'closed', merged_by: { login: 'renovate-bot' } });
    expect(JSON.parse(await file('package.json', 'main')).dependencies['left-pad']).toBe('1.3.0');
    // Renovate asked for the branch to go after the merge (it goes right after, as on Gitea).
    await eventually(async () => (await forge.request('GET', `${R}/branches/renovate%2Fleft-pad-1.x`, alice)).status, (s) => s === 404, 10000);
  });

  test('a newer version: the open PR is updated in place; nothing opened twice, the merged PR not reopened', async () => {
    const before = await pulls();
    registry.publish('tiny-lib', ['1.0.0', '2.0.0', '2.1.0']);
    await renovate();
    const after = await pulls();
    expect(after.map((p) => [p.number, p.state]).sort()).toEqual(before.map((p) => [p.number, p.state]).sort());
    const tiny = after.find((p) => p.head.ref === 'renovate/tiny-lib-2.x');
    expect(tiny).toMatchObject({ state: 'open', title: 'Update dependency tiny-lib to v2' });
    expect(tiny.body).toMatch(/`1\.0\.0` → `2\.1\.0`/);
    expect(JSON.parse(await file('package.json', 'renovate/tiny-lib-2.x')).dependencies['tiny-lib']).toBe('2.1.0');
    expect((await forge.request('GET', `${R}/issues?type=issues&state=all`, alice)).body.map((i: any) => i.title)).toEqual(['Dependency Dashboard']);
  });
});
