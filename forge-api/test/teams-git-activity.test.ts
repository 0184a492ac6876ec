/**
 * Team access over git smart HTTP (the repo.code unit decides, as in Gitea) and the team
 * activity feed (date filter, paging, private activity only for readers), with the real git
 * CLI, on SQLite and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { describeForge, PASSWORD } from './support/forge';

describeForge('team access over git HTTP and team activity', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const teams: Record<string, number> = {};
  let work: string;
  const env = { GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
  const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env, extendEnv: true, reject: false });
  const remote = (user: string) => {
    const u = new URL(`${f().url}/gitorg/code.git`);
    u.username = user;
    u.password = PASSWORD;
    return u.toString();
  };

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'team-git-'));
    await f().user('boss');
    for (const u of ['coder', 'looker', 'tracker', 'outsider']) await f().user(u);
    expect((await f().request('POST', '/orgs', { ...as('boss'), body: { username: 'gitorg' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/gitorg/repos', { ...as('boss'), body: { name: 'code', private: true, auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/orgs/gitorg/repos', { ...as('boss'), body: { name: 'elsewhere', private: true } })).status).toBe(201);
    const mk = async (name: string, body: Record<string, unknown>, member: string) => {
      const res = await f().request('POST', '/orgs/gitorg/teams', { ...as('boss'), body: { name, ...body } });
      expect(res.status).toBe(201);
      teams[name] = res.body.id;
      expect((await f().request('PUT', `/teams/${res.body.id}/members/${member}`, as('boss'))).status).toBe(204);
      expect((await f().request('PUT', `/teams/${res.body.id}/repos/gitorg/code`, as('boss'))).status).toBe(204);
    };
    await mk('coders', { permission: 'write', units: ['repo.code', 'repo.issues'] }, 'coder');
    await mk('lookers', { permission: 'read', units: ['repo.code'] }, 'looker');
    // Write on issues only: no code unit, so no git access at all.
    await mk('trackers', { units_map: { 'repo.issues': 'write' } }, 'tracker');
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('clone follows the code unit: code readers and writers clone, others do not', async () => {
    for (const u of ['coder', 'looker']) {
      const r = await git(work, 'clone', remote(u), `clone-${u}`);
      expect(r.exitCode).toBe(0);
      expect(fs.existsSync(path.join(work, `clone-${u}`, 'README.md'))).toBe(true);
    }
    for (const u of ['tracker', 'outsider']) {
      const r = await git(work, 'clone', remote(u), `clone-${u}`);
      expect(r.exitCode).not.toBe(0);
    }
    // The issues-only team still gets the repository through the API (write on issues), and its
    // permissions, taken from the code unit as Gitea's, say it may neither pull nor push.
    const res = await f().request('GET', '/repos/gitorg/code', as('tracker'));
    expect(res.status).toBe(200);
    expect(res.body.permissions).toMatchObject({ push: false, pull: false });
  });

  test('push needs write on the code unit', async () => {
    const dir = path.join(work, 'clone-looker');
    fs.writeFileSync(path.join(dir, 'x.txt'), 'x\n');
    await git(dir, 'add', 'x.txt');
    expect((await git(dir, 'commit', '-m', 'x')).exitCode).toBe(0);
    expect((await git(dir, 'push', 'origin', 'HEAD')).exitCode).not.toBe(0);
    const cdir = path.join(work, 'clone-coder');
    fs.writeFileSync(path.join(cdir, 'y.txt'), 'y\n');
    await git(cdir, 'add', 'y.txt');
    await git(cdir, 'commit', '-m', 'y');
    const pushed = await git(cdir, 'push', 'origin', 'HEAD');
    expect(pushed.exitCode).toBe(0);
    // The push is in the team's feed (Gitea's commit_repo row with the commits as JSON).
    const feed = await f().request('GET', `/teams/${teams.coders}/activities/feeds`, as('coder'));
    const push = feed.body.find((a: { op_type: string }) => a.op_type === 'commit_repo');
    expect(push).toMatchObject({ ref_name: 'refs/heads/main', act_user: { login: 'coder' }, repo: { full_name: 'gitorg/code' } });
    const content = JSON.parse(push.content);
    expect(content.Len).toBe(1);
    expect(content.Commits[0]).toMatchObject({ Message: 'y\n', AuthorName: 'Dev' });
    expect(content.CompareURL).toMatch(/^gitorg\/code\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/);
    expect(feed.body.some((a: { op_type: string }) => a.op_type === 'create_repo')).toBe(true);
  });

  test('team activity: the team repositories of the org feed, date filter, paging', async () => {
    for (const t of ['first', 'second', 'third']) {
      expect((await f().request('POST', '/repos/gitorg/code/issues', { ...as('coder'), body: { title: t } })).status).toBe(201);
    }
    // Activity in a repository the team does not have stays out of its feed.
    expect((await f().request('POST', '/repos/gitorg/elsewhere/issues', { ...as('boss'), body: { title: 'not for the team' } })).status).toBe(201);
    let res = await f().request('GET', `/teams/${teams.coders}/activities/feeds`, as('coder'));
    expect(res.status).toBe(200);
    const issueActs = res.body.filter((a: { op_type: string }) => a.op_type === 'create_issue');
    expect(issueActs.map((a: { content: string }) => a.content.split('|')[1])).toEqual(['third', 'second', 'first']);
    expect(res.body.every((a: { repo: { full_name: string } }) => a.repo.full_name === 'gitorg/code')).toBe(true);
    expect(issueActs[0]).toMatchObject({ act_user: { login: 'coder' }, is_private: true, user_id: expect.any(Number) });
    const total = Number(res.headers.get('x-total-count'));
    expect(total).toBe(res.body.length);
    res = await f().request('GET', `/teams/${teams.coders}/activities/feeds?limit=1&page=2`, as('coder'));
    expect(res.body).toHaveLength(1);
    expect(res.headers.get('x-total-count')).toBe(String(total));
    const today = new Date().toISOString().slice(0, 10);
    res = await f().request('GET', `/teams/${teams.coders}/activities/feeds?date=${today}`, as('coder'));
    expect(res.body).toHaveLength(total);
    res = await f().request('GET', `/teams/${teams.coders}/activities/feeds?date=2001-01-01`, as('coder'));
    expect(res.body).toEqual([]);
    res = await f().request('GET', `/teams/${teams.coders}/activities/feeds?date=yesterday`, as('coder'));
    expect(res.status).toBe(422);
  });

  test('team activity access: team members, org owners; the feed follows the team repositories', async () => {
    // Org owner (reads everything) sees the feed; an org member outside the team gets 403; outsiders 404.
    expect((await f().request('GET', `/teams/${teams.coders}/activities/feeds`, as('boss'))).body.length).toBeGreaterThan(0);
    expect((await f().request('GET', `/teams/${teams.coders}/activities/feeds`, as('looker'))).status).toBe(403);
    expect((await f().request('GET', `/teams/${teams.coders}/activities/feeds`, as('outsider'))).status).toBe(404);
    expect((await f().request('GET', `/teams/${teams.coders}/activities/feeds`)).status).toBe(401);
    // Once the repository leaves the team, its (private) activity leaves the team feed.
    expect((await f().request('DELETE', `/teams/${teams.lookers}/repos/gitorg/code`, as('boss'))).status).toBe(204);
    const res = await f().request('GET', `/teams/${teams.lookers}/activities/feeds`, as('looker'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});
