/**
 * Repository collaborators and watchers as Gitea 1.27.3 answers them: 204/404/422 statuses,
 * X-Total-Count, RepoCollaboratorPermission JSON, and access that follows the collaboration
 * (a write collaborator can commit through the API, and cannot once removed).
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('collaborators', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carol']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'tools', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } })).status).toBe(201);
  });

  test('an empty list, then PUT adds (write by default), GET checks, list shows users', async () => {
    let res = await f().request('GET', '/repos/alice/tools/collaborators', as('alice'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get('x-total-count')).toBe('0');

    expect((await f().request('GET', '/repos/alice/tools/collaborators/bob', as('alice'))).status).toBe(404);
    res = await f().request('PUT', '/repos/alice/tools/collaborators/bob', { ...as('alice'), body: {} });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await f().request('PUT', '/repos/alice/tools/collaborators/carol', { ...as('alice'), body: { permission: 'read' } })).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/collaborators/bob', as('alice'))).status).toBe(204);

    res = await f().request('GET', '/repos/alice/tools/collaborators?limit=1', as('carol'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['bob']);
    expect(res.body[0]).toEqual(expect.objectContaining({ id: expect.any(Number), login: 'bob', full_name: expect.any(String), avatar_url: expect.any(String) }));
    res = await f().request('GET', '/repos/alice/tools/collaborators?page=2&limit=1', as('carol'));
    expect(res.body.map((u: { login: string }) => u.login)).toEqual(['carol']);
  });

  test('permission: RepoCollaboratorPermission for self, repo admins; 403 for others; 404 unknown user', async () => {
    let res = await f().request('GET', '/repos/alice/tools/collaborators/bob/permission', as('bob'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ permission: 'write', role_name: 'write', user: expect.objectContaining({ login: 'bob' }) });
    res = await f().request('GET', '/repos/alice/tools/collaborators/carol/permission', as('alice'));
    expect(res.body).toEqual(expect.objectContaining({ permission: 'read', role_name: 'read' }));
    res = await f().request('GET', '/repos/alice/tools/collaborators/alice/permission', as('alice'));
    expect(res.body.permission).toBe('owner');
    res = await f().request('GET', '/repos/alice/tools/collaborators/bob/permission', as('carol'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own');
    expect((await f().request('GET', '/repos/alice/tools/collaborators/nobody/permission', as('alice'))).status).toBe(404);
  });

  test("errors: 401 without token, 403 for a non-admin's PUT/DELETE, 422 unknown user or permission, 404 private repo", async () => {
    expect((await f().request('GET', '/repos/alice/tools/collaborators')).status).toBe(401);
    let res = await f().request('PUT', '/repos/alice/tools/collaborators/carol', { ...as('bob'), body: { permission: 'admin' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    expect((await f().request('DELETE', '/repos/alice/tools/collaborators/carol', as('bob'))).status).toBe(403);
    res = await f().request('PUT', '/repos/alice/tools/collaborators/nobody', { ...as('alice'), body: {} });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('user does not exist [uid: 0, name: nobody]');
    expect((await f().request('GET', '/repos/alice/tools/collaborators/nobody', as('alice'))).status).toBe(422);
    expect((await f().request('PUT', '/repos/alice/tools/collaborators/carol', { ...as('alice'), body: { permission: 'owner' } })).status).toBe(422);
    expect((await f().request('GET', '/repos/alice/secret/collaborators', as('bob'))).status).toBe(404);
  });

  test('a write collaborator can commit; after DELETE the same request is refused; a private repo becomes visible and hidden again', async () => {
    const commit = (name: string) =>
      f().request('POST', `/repos/alice/tools/contents/${name}.txt`, { ...as('bob'), body: { content: Buffer.from(name).toString('base64'), message: name } });
    expect((await commit('one')).status).toBe(201);
    expect((await f().request('PUT', '/repos/alice/tools/collaborators/bob', { ...as('alice'), body: { permission: 'read' } })).status).toBe(204);
    expect((await commit('two')).status).toBe(403);
    expect((await f().request('PUT', '/repos/alice/tools/collaborators/bob', { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    expect((await commit('three')).status).toBe(201);
    expect((await f().request('DELETE', '/repos/alice/tools/collaborators/bob', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/collaborators/bob', as('alice'))).status).toBe(404);
    expect((await commit('four')).status).toBe(403);
    expect((await f().request('GET', '/repos/alice/tools/contents/three.txt')).status).toBe(200);
    expect((await f().request('GET', '/repos/alice/tools/contents/four.txt')).status).toBe(404);

    expect((await f().request('GET', '/repos/alice/secret', as('carol'))).status).toBe(404);
    expect((await f().request('PUT', '/repos/alice/secret/collaborators/carol', { ...as('alice'), body: { permission: 'read' } })).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/secret', as('carol'))).status).toBe(200);
    expect((await f().request('DELETE', '/repos/alice/secret/collaborators/carol', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/secret', as('carol'))).status).toBe(404);
  });

  test('subscribers: a new watcher is listed last, with X-Total-Count; a private repo is 404 to anonymous', async () => {
    let res = await f().request('GET', '/repos/alice/tools/subscribers');
    expect(res.status).toBe(200);
    const before = res.body.map((u: { login: string }) => u.login);
    expect((await f().request('PUT', '/repos/alice/tools/subscription', as('carol'))).status).toBe(200);
    res = await f().request('GET', '/repos/alice/tools/subscribers');
    expect(res.body.map((u: { login: string }) => u.login)).toEqual([...before, 'carol']);
    expect(res.headers.get('x-total-count')).toBe(String(before.length + 1));
    expect((await f().request('GET', '/repos/alice/secret/subscribers')).status).toBe(404);
  });

  test('a removed collaborator stops watching, even a public repository they still read (Gitea\'s DeleteCollaboration)', async () => {
    expect((await f().request('PUT', '/repos/alice/tools/collaborators/carol', { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/subscription', as('carol'))).status).toBe(200);
    const watchers = Number((await f().request('GET', '/repos/alice/tools/subscribers')).headers.get('x-total-count'));
    expect((await f().request('DELETE', '/repos/alice/tools/collaborators/carol', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/subscription', as('carol'))).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/tools', as('carol'))).body.watchers_count).toBe(watchers - 1);
    // Watching again is the user's choice; removing a non-collaborator changes nothing.
    expect((await f().request('PUT', '/repos/alice/tools/subscription', as('carol'))).status).toBe(200);
    expect((await f().request('DELETE', '/repos/alice/tools/collaborators/carol', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/subscription', as('carol'))).status).toBe(200);
  });

  test("a removed collaborator loses their assignments where they can no longer be assigned (private), keeps them where they read the pull requests (public), and a repository made private keeps them", async () => {
    const assignees = async (repo: string) => ((await f().request('GET', `/repos/alice/${repo}/issues/1`, as('alice'))).body.assignees ?? []).map((u: { login: string }) => u.login);
    for (const repo of ['secret', 'tools']) {
      expect((await f().request('PUT', `/repos/alice/${repo}/collaborators/carol`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
      expect((await f().request('POST', `/repos/alice/${repo}/issues`, { ...as('alice'), body: { title: 'work', assignees: ['carol'] } })).status).toBe(201);
    }
    for (const repo of ['secret', 'tools']) expect((await f().request('DELETE', `/repos/alice/${repo}/collaborators/carol`, as('alice'))).status).toBe(204);
    expect(await assignees('secret')).toEqual([]);
    expect(await assignees('tools')).toEqual(['carol']);
    // No timeline entry says so (Gitea deletes the rows).
    const timeline = (await f().request('GET', '/repos/alice/secret/issues/1/timeline', as('alice'))).body as { type: string }[];
    expect(timeline.map((e) => e.type)).toEqual(['assignees']);
    expect((await f().request('PATCH', '/repos/alice/tools', { ...as('alice'), body: { private: true } })).status).toBe(200);
    expect(await assignees('tools')).toEqual(['carol']);
  });
});
