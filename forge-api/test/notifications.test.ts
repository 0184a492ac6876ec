/**
 * Notifications and activities over HTTP on SQLite and PostgreSQL: threads for watchers,
 * participants, mentioned and assigned users (never the actor), Gitea's list filters and
 * status codes (205 with a body), one thread (403 others', 404), repository lists, scopes,
 * and nothing shown for repositories the user can no longer read. Activities: the feed rows.
 */
import { describeForge, PASSWORD } from './support/forge';
import { rawRequest } from './support/raw-request';

describeForge('notifications and activities', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const r = '/repos/alice/news';
  const basic = (name: string) => ({ authorization: `Basic ${Buffer.from(`${name}:${PASSWORD}`).toString('base64')}` });
  /** PUT/PATCH answering 205 with a body (fetch would drop it). */
  const mark = (method: string, p: string, user: string) => rawRequest(`${f().api}${p}`, method, basic(user));
  const threads = async (user: string, query = '') => (await f().request('GET', `/notifications${query}`, as(user))).body as any[];
  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['alice', 'bob', 'carl', 'dave', 'erin']) await f().user(u);
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'news' } });
    expect((await f().request('PUT', `${r}/subscription`, as('bob'))).status).toBe(200);
  });

  test('watchers get a thread for a new issue, the actor does not; shape as Gitea', async () => {
    expect((await f().request('GET', `${r}/subscription`, as('bob'))).body.subscribed).toBe(true);
    expect((await f().request('GET', `${r}/subscription`, as('carl'))).status).toBe(404);
    await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'Release notes' } });
    expect(await threads('alice')).toEqual([]);
    expect(await threads('carl')).toEqual([]);
    const list = await f().request('GET', '/notifications', as('bob'));
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe('1');
    const t = list.body[0];
    expect(t).toMatchObject({
      unread: true,
      pinned: false,
      url: `${f().url}/api/v1/notifications/threads/${t.id}`,
      subject: {
        title: 'Release notes',
        type: 'Issue',
        state: 'open',
        url: `${f().url}/api/v1/repos/alice/news/issues/1`,
        html_url: `${f().url}/alice/news/issues/1`,
        latest_comment_url: '',
        latest_comment_html_url: '',
      },
    });
    expect(t.repository.full_name).toBe('alice/news');
    expect((await f().request('GET', '/notifications/new', as('bob'))).body).toEqual({ new: 1 });
  });

  test('comments notify participants (poster) and watchers; a read thread becomes unread again', async () => {
    const c = await f().request('POST', `${r}/issues/1/comments`, { ...as('carl'), body: { body: 'looks good' } });
    const forAlice = await threads('alice');
    expect(forAlice).toHaveLength(1);
    expect(forAlice[0].subject.latest_comment_url).toBe(`${f().url}/api/v1/repos/alice/news/issues/comments/${c.body.id}`);
    expect(forAlice[0].subject.latest_comment_html_url).toBe(`${f().url}/alice/news/issues/1#issuecomment-${c.body.id}`);
    expect(await threads('carl')).toEqual([]);
    const id = (await threads('bob'))[0].id;
    const marked = await mark('PATCH', `/notifications/threads/${id}`, 'bob');
    expect(marked.status).toBe(205);
    expect(marked.body).toMatchObject({ id, unread: false, pinned: false });
    expect(await threads('bob')).toEqual([]);
    expect(await threads('bob', '?all=true')).toHaveLength(1);
    expect(await threads('bob', '?status-types=read')).toHaveLength(1);
    expect((await f().request('GET', '/notifications/new', as('bob'))).body).toEqual({ new: 0 });
    // carl is now a participant: alice's next comment reaches carl and bob (unread again), not alice
    await f().request('POST', `${r}/issues/1/comments`, { ...as('alice'), body: { body: 'thanks' } });
    expect(await threads('carl')).toHaveLength(1);
    expect((await threads('bob'))[0]).toMatchObject({ id, unread: true });
  });

  test('mentions and assignments notify those users; state changes notify participants', async () => {
    await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'Ping', body: 'cc @dave' } });
    expect((await threads('dave')).map((t) => t.subject.title)).toEqual(['Ping']);
    await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'Task', assignees: ['alice'] } });
    await f().app.prisma.collaboration.create({
      data: { repoId: (await f().app.services.repos.findByOwnerAndName('alice', 'news'))!.id, userId: (await f().app.services.users.findByName('erin'))!.id, mode: 2 },
    });
    await f().request('PATCH', `${r}/issues/3`, { ...as('alice'), body: { assignees: ['erin'] } });
    expect((await threads('erin')).map((t) => t.subject.title)).toEqual(['Task']);
    await f().request('PUT', '/notifications', as('carl'));
    await f().request('PATCH', `${r}/issues/1`, { ...as('alice'), body: { state: 'closed' } });
    const forCarl = await threads('carl');
    expect(forCarl.map((t) => [t.subject.title, t.subject.state])).toEqual([['Release notes', 'closed']]);
  });

  test('PUT /notifications: 205 with the changed threads; last_read_at, to-status, status-types; bad date 400', async () => {
    let res = await mark('PUT', '/notifications?last_read_at=2000-01-01T00:00:00Z', 'bob');
    expect(res.status).toBe(205);
    expect(res.body).toEqual([]);
    res = await mark('PUT', '/notifications', 'bob');
    expect(res.status).toBe(205);
    expect(res.body.length).toBeGreaterThan(0);
    expect(res.body.every((t: { unread: boolean }) => !t.unread)).toBe(true);
    expect((await f().request('GET', '/notifications/new', as('bob'))).body).toEqual({ new: 0 });
    res = await mark('PUT', '/notifications?status-types=read&to-status=pinned', 'bob');
    expect(res.status).toBe(205);
    expect(res.body.every((t: { pinned: boolean }) => t.pinned)).toBe(true);
    // pinned threads are listed by default
    expect((await threads('bob')).length).toBe(res.body.length);
    expect((await f().request('PUT', '/notifications?last_read_at=yesterday', as('bob'))).status).toBe(400);
  });

  test('filters: subject-type, since/before, paging', async () => {
    expect(await threads('bob', '?all=true&subject-type=pull')).toEqual([]);
    expect((await threads('bob', '?all=true&subject-type=issue')).length).toBeGreaterThan(0);
    expect(await threads('bob', '?all=true&since=2999-01-01T00:00:00Z')).toEqual([]);
    expect(await threads('bob', '?all=true&before=2000-01-01T00:00:00Z')).toEqual([]);
    const page = await f().request('GET', '/notifications?all=true&limit=1', as('bob'));
    expect(page.body).toHaveLength(1);
    expect(Number(page.headers.get('x-total-count'))).toBeGreaterThan(1);
  });

  test("threads: another user's is 403, an admin may read it, unknown 404; anonymous 401; scopes", async () => {
    const id = (await threads('alice', '?all=true'))[0].id;
    expect((await f().request('GET', `/notifications/threads/${id}`, as('alice'))).status).toBe(200);
    expect((await f().request('GET', `/notifications/threads/${id}`, as('bob'))).status).toBe(403);
    expect((await f().request('PATCH', `/notifications/threads/${id}`, as('bob'))).status).toBe(403);
    expect((await f().request('GET', `/notifications/threads/${id}`, as('root'))).status).toBe(200);
    expect((await f().request('GET', '/notifications/threads/999999', as('alice'))).status).toBe(404);
    expect((await f().request('GET', '/notifications')).status).toBe(401);
    const issueTok = await f().token('bob', ['write:issue']);
    expect((await f().request('GET', '/notifications', { token: issueTok })).status).toBe(403);
    const readTok = await f().token('bob', ['read:notification']);
    expect((await f().request('GET', '/notifications', { token: readTok })).status).toBe(200);
    expect((await f().request('PUT', '/notifications', { token: readTok })).status).toBe(403);
  });

  test('repository notifications: list and mark within one repository; unreadable repository 404', async () => {
    await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'elsewhere' } });
    await f().request('PUT', '/repos/bob/elsewhere/subscription', as('alice'));
    await f().request('POST', '/repos/bob/elsewhere/issues', { ...as('bob'), body: { title: 'Over here' } });
    const here = await f().request('GET', '/repos/bob/elsewhere/notifications', as('alice'));
    expect(here.status).toBe(200);
    expect(here.body.map((t: { subject: { title: string } }) => t.subject.title)).toEqual(['Over here']);
    const marked = await mark('PUT', '/repos/bob/elsewhere/notifications', 'alice');
    expect(marked.status).toBe(205);
    expect(marked.body).toHaveLength(1);
    expect((await f().request('GET', '/repos/bob/elsewhere/notifications', as('alice'))).body).toEqual([]);
    expect((await f().request('GET', '/repos/nobody/nothing/notifications', as('alice'))).status).toBe(404);
  });

  test('private repository: readers are notified; once access is gone, nothing is shown', async () => {
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'vault', private: true } });
    const vault = (await f().app.services.repos.findByOwnerAndName('alice', 'vault'))!;
    const dave = (await f().app.services.users.findByName('dave'))!;
    const carl = (await f().app.services.users.findByName('carl'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: vault.id, userId: dave.id, mode: 1 } });
    await f().app.prisma.watch.create({ data: { repoId: vault.id, userId: dave.id } });
    // carl watches without access (e.g. access removed later): never notified
    await f().app.prisma.watch.create({ data: { repoId: vault.id, userId: carl.id } });
    await f().request('PUT', '/notifications', as('dave'));
    await f().request('PUT', '/notifications', as('carl'));
    await f().request('POST', '/repos/alice/vault/issues', { ...as('alice'), body: { title: 'Secret plan' } });
    const forDave = await threads('dave');
    expect(forDave.map((t) => t.subject.title)).toEqual(['Secret plan']);
    expect(await threads('carl')).toEqual([]);
    await f().app.prisma.collaboration.deleteMany({ where: { repoId: vault.id, userId: dave.id } });
    expect(await threads('dave', '?all=true')).toEqual(expect.not.arrayContaining([expect.objectContaining({ id: forDave[0].id })]));
    expect((await f().request('GET', '/notifications/new', as('dave'))).body).toEqual({ new: 0 });
    expect((await f().request('GET', `/notifications/threads/${forDave[0].id}`, as('dave'))).status).toBe(404);
  });

  test('activities: issue and comment events recorded for actor, watchers; converted as Gitea', async () => {
    const { activities } = f().app.services;
    const alice = (await f().app.services.users.findByName('alice'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    const carl = (await f().app.services.users.findByName('carl'))!;
    const own = await activities.list({ userId: alice.id, viewer: alice, skip: 0, take: 50 });
    const json = await activities.toJson(own.rows, alice);
    const created = json.find((a) => a.op_type === 'create_issue' && a.content === '1|Release notes');
    expect(created).toMatchObject({ act_user_id: alice.id, user_id: alice.id, is_private: false });
    expect(created!.act_user.login).toBe('alice');
    expect(created!.repo.full_name).toBe('alice/news');
    const comment = json.find((a) => a.op_type === 'comment_issue');
    expect(comment!.comment!.body).toBe('thanks');
    expect(json.some((a) => a.op_type === 'close_issue')).toBe(true);
    // bob watches alice/news: he sees her events in his feed
    const bobs = await activities.toJson((await activities.list({ userId: bob.id, viewer: bob, skip: 0, take: 50 })).rows, bob);
    expect(bobs.some((a) => a.act_user_id === alice.id && a.op_type === 'create_issue')).toBe(true);
    // the private repository's events are hidden from a viewer without access
    const asCarl = await activities.list({ userId: alice.id, viewer: carl, skip: 0, take: 50 });
    expect(asCarl.rows.some((a) => a.isPrivate)).toBe(false);
    expect(own.rows.some((a) => a.isPrivate)).toBe(true);
  });
});
