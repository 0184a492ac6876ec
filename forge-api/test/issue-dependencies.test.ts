/**
 * Dependencies and blocks over HTTP on SQLite and PostgreSQL: both directions, across readable
 * repositories, refused when disabled, no self/duplicate/cycle, hidden private issues, and
 * closing an issue with open dependencies refused (412) as Gitea does.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('issue dependencies', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const a = '/repos/alice/app';
  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    for (const [owner, name, priv] of [['alice', 'app', false], ['alice', 'lib', false], ['alice', 'closed', true], ['bob', 'other', false]] as const) {
      await f().request('POST', '/user/repos', { ...as(owner), body: { name, private: priv } });
    }
    for (let i = 1; i <= 4; i++) await f().request('POST', `${a}/issues`, { ...as('alice'), body: { title: `app ${i}` } });
    await f().request('POST', '/repos/alice/lib/issues', { ...as('alice'), body: { title: 'lib 1' } });
    await f().request('POST', '/repos/alice/closed/issues', { ...as('alice'), body: { title: 'private 1' } });
    await f().request('POST', '/repos/bob/other/issues', { ...as('bob'), body: { title: 'bob 1' } });
  });

  test('add a dependency (201 with the path issue); listed as dependency of 1 and as blocked by 2', async () => {
    const res = await f().request('POST', `${a}/issues/1/dependencies`, { ...as('alice'), body: { owner: 'alice', repo: 'app', index: 2 } });
    expect(res.status).toBe(201);
    expect(res.body.number).toBe(1);
    let list = await f().request('GET', `${a}/issues/1/dependencies`);
    expect(list.body.map((i: { number: number }) => i.number)).toEqual([2]);
    expect(list.headers.get('x-total-count')).toBe('1');
    list = await f().request('GET', `${a}/issues/2/blocks`);
    expect(list.body.map((i: { number: number }) => i.number)).toEqual([1]);
    // Gitea 1.27.3 pages the blocks list without a total count header (seen side by side).
    expect(list.headers.get('x-total-count')).toBeNull();
  });

  test('blocks: POST on the blocker makes the body issue depend on it', async () => {
    const res = await f().request('POST', `${a}/issues/3/blocks`, { ...as('alice'), body: { index: 4 } });
    expect(res.status).toBe(201);
    expect(res.body.number).toBe(3);
    expect((await f().request('GET', `${a}/issues/4/dependencies`)).body.map((i: { number: number }) => i.number)).toEqual([3]);
  });

  test('cross-repository dependency, shown with its own repository', async () => {
    const res = await f().request('POST', `${a}/issues/1/dependencies`, { ...as('alice'), body: { owner: 'alice', repo: 'lib', index: 1 } });
    expect(res.status).toBe(201);
    const list = await f().request('GET', `${a}/issues/1/dependencies`);
    expect(list.body.map((i: { repository: { full_name: string }; number: number }) => `${i.repository.full_name}#${i.number}`)).toEqual(['alice/app#2', 'alice/lib#1']);
  });

  test('self, duplicate and two-issue cycle are refused (422)', async () => {
    expect((await f().request('POST', `${a}/issues/1/dependencies`, { ...as('alice'), body: { index: 1 } })).status).toBe(422);
    expect((await f().request('POST', `${a}/issues/1/dependencies`, { ...as('alice'), body: { index: 2 } })).status).toBe(422);
    const cycle = await f().request('POST', `${a}/issues/2/dependencies`, { ...as('alice'), body: { index: 1 } });
    expect(cycle.status).toBe(422);
    expect(cycle.body.message).toContain('circular');
  });

  test('closing with open dependencies is refused (412); after closing them it works', async () => {
    const res = await f().request('PATCH', `${a}/issues/1`, { ...as('alice'), body: { state: 'closed' } });
    expect(res.status).toBe(412);
    expect(res.body.message).toBe('cannot close this issue or pull request because it still has open dependencies');
    expect((await f().request('PATCH', `${a}/issues/2`, { ...as('alice'), body: { state: 'closed' } })).status).toBe(201);
    expect((await f().request('PATCH', '/repos/alice/lib/issues/1', { ...as('alice'), body: { state: 'closed' } })).status).toBe(201);
    expect((await f().request('PATCH', `${a}/issues/1`, { ...as('alice'), body: { state: 'closed' } })).status).toBe(201);
  });

  test('permissions: writer on the dependent issue needed (404 otherwise); unreadable dependency 404 and hidden from lists', async () => {
    // bob cannot write alice/app
    expect((await f().request('POST', `${a}/issues/3/dependencies`, { ...as('bob'), body: { owner: 'bob', repo: 'other', index: 1 } })).status).toBe(404);
    // bob can make his issue depend on alice's public one
    expect((await f().request('POST', '/repos/bob/other/issues/1/dependencies', { ...as('bob'), body: { owner: 'alice', repo: 'app', index: 3 } })).status).toBe(201);
    // but not on alice's private repository
    expect((await f().request('POST', '/repos/bob/other/issues/1/dependencies', { ...as('bob'), body: { owner: 'alice', repo: 'closed', index: 1 } })).status).toBe(404);
    // alice links her private issue as a blocker of bob's issue? no: she cannot write bob's repo
    expect((await f().request('POST', '/repos/alice/closed/issues/1/blocks', { ...as('alice'), body: { owner: 'bob', repo: 'other', index: 1 } })).status).toBe(404);
    // alice makes app#3 depend on her private issue: carl does not see it in the list
    expect((await f().request('POST', `${a}/issues/3/dependencies`, { ...as('alice'), body: { owner: 'alice', repo: 'closed', index: 1 } })).status).toBe(201);
    const asCarl = await f().request('GET', `${a}/issues/3/dependencies`, as('carl'));
    expect(asCarl.body).toEqual([]);
    const asAlice = await f().request('GET', `${a}/issues/3/dependencies`, as('alice'));
    expect(asAlice.body.map((i: { title: string }) => i.title)).toEqual(['private 1']);
    expect((await f().request('POST', `${a}/issues/3/dependencies`, { body: { index: 4 } })).status).toBe(401);
  });

  test('remove: 201 with the issue, then gone; removing again 404', async () => {
    let res = await f().request('DELETE', `${a}/issues/3/blocks`, { ...as('alice'), body: { index: 4 } });
    expect(res.status).toBe(201);
    expect((await f().request('GET', `${a}/issues/4/dependencies`)).body).toEqual([]);
    res = await f().request('DELETE', `${a}/issues/3/blocks`, { ...as('alice'), body: { index: 4 } });
    expect(res.status).toBe(404);
  });

  test('disabled dependencies: every dependency route answers 404', async () => {
    await f().app.prisma.repository.updateMany({ where: { lowerName: 'lib' }, data: { enableDependencies: false } });
    expect((await f().request('GET', '/repos/alice/lib/issues/1/dependencies')).status).toBe(404);
    expect((await f().request('POST', '/repos/alice/lib/issues/1/dependencies', { ...as('alice'), body: { index: 1 } })).status).toBe(404);
    // and a repository that allows them cannot link to one that does not
    expect((await f().request('POST', `${a}/issues/4/dependencies`, { ...as('alice'), body: { repo: 'lib', index: 1 } })).status).toBe(404);
  });
});
