/**
 * Answers as Gitea 1.27 gives them, where a client saw the forge differ: optional body fields
 * sent as null, the repositories of /user/repos, users embedded in records, the Repository
 * record's fields, error bodies, wrong methods and the version; webhook names, user keys
 * without a read-only mode, the types and headers of /markdown/raw and the blocks list.
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('Gitea 1.27 answers', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const host = () => new URL(f().url).hostname;

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'tracker' } })).status).toBe(201);
  });

  test('an optional field sent as null counts as not sent (tea sends "due_date": null)', async () => {
    const res = await f().request('POST', '/repos/alice/tracker/issues', {
      ...as('alice'),
      body: { title: 'from tea', body: null, due_date: null, milestone: null, labels: null, assignees: null, ref: null, closed: null },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'from tea', body: '', due_date: null, milestone: null, assignees: null, state: 'open' });
    // A required field sent as null is still missing.
    const missing = await f().request('POST', '/repos/alice/tracker/issues', { ...as('alice'), body: { title: null } });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe('[Title]: Required');
  });

  test('issues carry projects (null) and a content_version bumped by each change of the body', async () => {
    const created = await f().request('POST', '/repos/alice/tracker/issues', { ...as('alice'), body: { title: 'versioned', body: 'one' } });
    expect(created.body).toMatchObject({ projects: null, content_version: 0 });
    const url = `/repos/alice/tracker/issues/${created.body.number}`;
    expect((await f().request('PATCH', url, { ...as('alice'), body: { body: 'two' } })).body.content_version).toBe(1);
    expect((await f().request('PATCH', url, { ...as('alice'), body: { title: 'renamed', body: 'two' } })).body.content_version).toBe(1);
  });

  test('GET /user/repos lists the repositories teams grant, with the total and links counting them', async () => {
    expect((await f().request('POST', '/orgs', { ...as('carl'), body: { username: 'teamco' } })).status).toBe(201);
    for (const name of ['granted', 'hidden']) {
      expect((await f().request('POST', '/orgs/teamco/repos', { ...as('carl'), body: { name, private: true } })).status).toBe(201);
    }
    const team = await f().request('POST', '/orgs/teamco/teams', {
      ...as('carl'),
      body: { name: 'readers', permission: 'read', units: ['repo.code', 'repo.issues'], includes_all_repositories: false },
    });
    expect(team.status).toBe(201);
    expect((await f().request('PUT', `/teams/${team.body.id}/members/bob`, as('carl'))).status).toBe(204);
    expect((await f().request('PUT', `/teams/${team.body.id}/repos/teamco/granted`, as('carl'))).status).toBe(204);
    expect((await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'own' } })).status).toBe(201);

    const res = await f().request('GET', '/user/repos?limit=1', as('bob'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('2');
    expect(res.headers.get('link')).toContain('rel="next"');
    const all = await f().request('GET', '/user/repos', as('bob'));
    expect(all.body.map((r: { full_name: string }) => r.full_name)).toEqual(['teamco/granted', 'bob/own']);
    expect(all.body[0].permissions).toEqual({ admin: false, push: false, pull: true });
  });

  test('users embedded in comments and as assignees show the placeholder e-mail and no private details, even to themselves', async () => {
    const issue = await f().request('POST', '/repos/alice/tracker/issues', { ...as('alice'), body: { title: 'assigned', assignees: ['alice'] } });
    expect(issue.status).toBe(201);
    const comment = await f().request('POST', `/repos/alice/tracker/issues/${issue.body.number}/comments`, { ...as('alice'), body: { body: 'hi' } });
    expect(comment.status).toBe(201);
    const placeholder = `alice@noreply.${host()}`;
    for (const viewer of ['alice', 'root', 'bob']) {
      const got = await f().request('GET', `/repos/alice/tracker/issues/comments/${comment.body.id}`, as(viewer));
      expect(got.body.user).toMatchObject({ login: 'alice', email: placeholder, is_admin: false, active: false, last_login: '0001-01-01T00:00:00Z' });
      const seen = await f().request('GET', `/repos/alice/tracker/issues/${issue.body.number}`, as(viewer));
      expect(seen.body.assignee).toMatchObject({ login: 'alice', email: placeholder, active: false });
      expect(seen.body.assignees[0]).toMatchObject({ login: 'alice', email: placeholder, active: false });
    }
    // The poster of the issue itself is shown for the viewer, as Gitea does.
    const own = await f().request('GET', `/repos/alice/tracker/issues/${issue.body.number}`, as('alice'));
    expect(own.body.user).toMatchObject({ login: 'alice', email: 'alice@example.com', active: true });
  });

  test("a user's public keys show the owner and the key type only to the owner and site admins", async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOYu6vQyQZ1C4r9xg3XrCkP2ptKk6dN0ZyKoXnA5x0Yh test@example';
    const added = await f().request('POST', '/user/keys', { ...as('alice'), body: { key, title: 'laptop' } });
    expect(added.status).toBe(201);
    const other = await f().request('GET', '/users/alice/keys', as('bob'));
    expect(other.status).toBe(200);
    expect(other.body[0].user).toBeUndefined();
    expect(other.body[0].key_type).toBeUndefined();
    const admin = await f().request('GET', '/users/alice/keys', as('root'));
    expect(admin.body[0]).toMatchObject({ key_type: 'user', user: { login: 'alice', email: 'alice@example.com', active: true } });
  });

  test("a user's key has no read-only mode; anonymous callers of /users/{username}/keys get 401", async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ro@example';
    const added = await f().request('POST', '/user/keys', { ...as('bob'), body: { key, title: 'ro', read_only: true } });
    expect(added.status).toBe(201);
    expect(added.body).not.toHaveProperty('read_only');
    const listed = await f().request('GET', '/users/bob/keys', as('bob'));
    expect(listed.body.map((k: Record<string, unknown>) => 'read_only' in k)).toEqual([false]);
    for (const user of ['bob', 'nobody']) {
      const anonymous = await f().request('GET', `/users/${user}/keys`);
      expect({ user, status: anonymous.status, message: anonymous.body?.message }).toEqual({ user, status: 401, message: 'token is required' });
    }
  });

  test('webhooks have a name: set at creation (trimmed), changed by an edit, kept by an edit without it, on every kind of hook', async () => {
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'hookorg' } })).status).toBe(201);
    const config = { url: 'http://example.com/hook', content_type: 'json' };
    for (const base of ['/repos/alice/tracker/hooks', '/orgs/hookorg/hooks', '/user/hooks', '/admin/hooks']) {
      const who = base === '/admin/hooks' ? as('root') : as('alice');
      const created = await f().request('POST', base, { ...who, body: { type: 'gitea', name: '  ci  ', config, active: true } });
      expect({ base, status: created.status, name: created.body?.name }).toEqual({ base, status: 201, name: 'ci' });
      const unnamed = await f().request('POST', base, { ...who, body: { type: 'gitea', config } });
      expect({ base, name: unnamed.body?.name }).toEqual({ base, name: '' });
      const renamed = await f().request('PATCH', `${base}/${created.body.id}`, { ...who, body: { name: 'deploy' } });
      expect({ base, status: renamed.status, name: renamed.body?.name }).toEqual({ base, status: 200, name: 'deploy' });
      const kept = await f().request('PATCH', `${base}/${created.body.id}`, { ...who, body: { active: false } });
      expect({ base, name: kept.body?.name }).toEqual({ base, name: 'deploy' });
      // Admin hooks list the system ones unless asked for all (these are default hooks).
      const listed = await f().request('GET', base === '/admin/hooks' ? `${base}?type=all` : base, who);
      expect({ base, names: listed.body.map((h: { name: string }) => h.name) }).toEqual({ base, names: ['deploy', ''] });
      const long = await f().request('POST', base, { ...who, body: { type: 'gitea', name: 'n'.repeat(256), config } });
      expect({ base, status: long.status }).toEqual({ base, status: 422 });
      // The limit counts characters, not bytes.
      expect((await f().request('POST', base, { ...who, body: { type: 'gitea', name: '\u00e9'.repeat(255), config } })).status).toBe(201);
    }
  });

  test('/markdown/raw answers text/html; the blocks list sends no X-Total-Count, the dependencies list does', async () => {
    const md = await f().request('POST', '/markdown/raw', { ...as('alice'), raw: '# hi', contentType: 'text/plain' });
    expect(md.status).toBe(200);
    expect(md.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const a = await f().request('POST', '/repos/alice/tracker/issues', { ...as('alice'), body: { title: 'blocker' } });
    const b = await f().request('POST', '/repos/alice/tracker/issues', { ...as('alice'), body: { title: 'blocked' } });
    const blocks = await f().request('POST', `/repos/alice/tracker/issues/${a.body.number}/blocks`, { ...as('alice'), body: { owner: 'alice', repo: 'tracker', index: b.body.number } });
    expect(blocks.status).toBe(201);
    const listed = await f().request('GET', `/repos/alice/tracker/issues/${a.body.number}/blocks`, as('alice'));
    expect(listed.body.map((i: { number: number }) => i.number)).toEqual([b.body.number]);
    expect(listed.headers.get('x-total-count')).toBeNull();
    const deps = await f().request('GET', `/repos/alice/tracker/issues/${b.body.number}/dependencies`, as('alice'));
    expect(deps.body.map((i: { number: number }) => i.number)).toEqual([a.body.number]);
    expect(deps.headers.get('x-total-count')).toBe('1');
  });

  test('repository records carry the 1.27 fields; a license chosen at creation is listed', async () => {
    const created = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'licensed', auto_init: true, license: 'MIT' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      has_code: true,
      branch_count: 1,
      licenses: ['MIT'],
      allow_merge_update: true,
      default_update_style: 'merge',
      mirror_last_sync_at: '0001-01-01T00:00:00Z',
    });
    const empty = await f().request('GET', '/repos/alice/tracker', as('alice'));
    expect(empty.body).toMatchObject({ branch_count: 0, licenses: [], has_code: true });
  });

  test('404 bodies carry only message and url; a known path with a wrong method is 405 with an empty body', async () => {
    const missing = await f().request('GET', '/repos/alice/nothing-here', as('alice'));
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'not found', url: `${f().url}/api/swagger` });
    const wrong = await f().request('DELETE', '/version', as('alice'));
    expect(wrong.status).toBe(405);
    expect(wrong.text).toBe('');
    expect(wrong.headers.get('allow')).toBe('GET');
    const wrongWithParams = await f().request('PUT', '/repos/alice/tracker/issues', as('alice'));
    expect(wrongWithParams.status).toBe(405);
  });

  test('GET /version reports the Gitea API version implemented', async () => {
    expect((await f().request('GET', '/version')).body).toEqual({ version: '1.27.3' });
  });
});
