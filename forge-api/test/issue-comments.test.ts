/**
 * Comments and reactions over HTTP on SQLite and PostgreSQL: per issue (since/before) and per
 * repository (paged), get/edit/delete in both path forms, poster-or-writer rule, locked
 * issues, comment counts, timeline events (204), reactions (201 new / 200 existing, allowed set).
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('issue comments and reactions', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const r = '/repos/alice/talk';
  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'talk' } });
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'hush', private: true } });
    await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'one' } });
    await f().request('POST', `${r}/issues`, { ...as('alice'), body: { title: 'two' } });
    await f().request('POST', '/repos/alice/hush/issues', { ...as('alice'), body: { title: 'private' } });
  });

  test('create: 201 with Gitea fields, body required (422), anonymous 401, counts comments', async () => {
    const res = await f().request('POST', `${r}/issues/1/comments`, { ...as('bob'), body: { body: 'first!' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      body: 'first!',
      html_url: `${f().url}/alice/talk/issues/1#issuecomment-${res.body.id}`,
      issue_url: `${f().url}/alice/talk/issues/1`,
      pull_request_url: '',
      original_author: '',
      original_author_id: 0,
      assets: [],
    });
    expect(res.body.user.login).toBe('bob');
    expect((await f().request('POST', `${r}/issues/1/comments`, { ...as('bob'), body: {} })).status).toBe(422);
    expect((await f().request('POST', `${r}/issues/1/comments`, { body: { body: 'anon' } })).status).toBe(401);
    expect((await f().request('POST', `${r}/issues/99/comments`, { ...as('bob'), body: { body: 'x' } })).status).toBe(404);
    expect((await f().request('POST', '/repos/alice/hush/issues/1/comments', { ...as('bob'), body: { body: 'x' } })).status).toBe(404);
    await f().request('POST', `${r}/issues/1/comments`, { ...as('carl'), body: { body: 'second' } });
    expect((await f().request('GET', `${r}/issues/1`)).body.comments).toBe(2);
  });

  test('list per issue (X-Total-Count, since/before) and per repository (paged, Link)', async () => {
    await f().request('POST', `${r}/issues/2/comments`, { ...as('alice'), body: { body: 'on two' } });
    let res = await f().request('GET', `${r}/issues/1/comments`);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { body: string }) => c.body)).toEqual(['first!', 'second']);
    expect(res.headers.get('x-total-count')).toBe('2');
    res = await f().request('GET', `${r}/issues/1/comments?since=2999-01-01T00:00:00Z`);
    expect(res.body).toEqual([]);
    res = await f().request('GET', `${r}/issues/1/comments?before=2999-01-01T00:00:00Z`);
    expect(res.body).toHaveLength(2);
    res = await f().request('GET', `${r}/issues/comments?limit=2`);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(res.body.map((c: { body: string }) => c.body)).toEqual(['first!', 'second']);
    expect(res.headers.get('link')).toContain('rel="next"');
    res = await f().request('GET', `${r}/issues/comments?limit=2&page=2`);
    expect(res.body.map((c: { body: string }) => c.body)).toEqual(['on two']);
    expect((await f().request('GET', '/repos/alice/hush/issues/comments', as('bob'))).status).toBe(404);
  });

  test('get, edit and delete: both path forms, poster or writer only, other repository 404', async () => {
    const c = (await f().request('POST', `${r}/issues/2/comments`, { ...as('bob'), body: { body: 'editable' } })).body;
    expect((await f().request('GET', `${r}/issues/comments/${c.id}`)).body.body).toBe('editable');
    // carl is neither poster nor writer
    let res = await f().request('PATCH', `${r}/issues/comments/${c.id}`, { ...as('carl'), body: { body: 'nope' } });
    expect(res.status).toBe(403);
    res = await f().request('PATCH', `${r}/issues/comments/${c.id}`, { ...as('bob'), body: { body: 'edited' } });
    expect(res.status).toBe(200);
    expect(res.body.body).toBe('edited');
    // deprecated form: the index is ignored; the repo owner (writer) may edit
    res = await f().request('PATCH', `${r}/issues/999/comments/${c.id}`, { ...as('alice'), body: { body: 'by owner' } });
    expect(res.status).toBe(200);
    expect(res.body.body).toBe('by owner');
    expect((await f().request('PATCH', `${r}/issues/comments/${c.id}`, { ...as('bob'), body: {} })).status).toBe(422);
    // a comment of another repository is not found here
    const other = (await f().request('POST', '/repos/alice/hush/issues/1/comments', { ...as('alice'), body: { body: 'secret' } })).body;
    expect((await f().request('GET', `${r}/issues/comments/${other.id}`)).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/hush/issues/comments/' + other.id, as('carl'))).status).toBe(404);
    expect((await f().request('DELETE', `${r}/issues/comments/${c.id}`, as('carl'))).status).toBe(403);
    const before = (await f().request('GET', `${r}/issues/2`)).body.comments;
    expect((await f().request('DELETE', `${r}/issues/1/comments/${c.id}`, as('bob'))).status).toBe(204);
    expect((await f().request('GET', `${r}/issues/comments/${c.id}`)).status).toBe(404);
    expect((await f().request('GET', `${r}/issues/2`)).body.comments).toBe(before - 1);
  });

  test('timeline events: GET 204, edit 204, delete 400', async () => {
    await f().request('PATCH', `${r}/issues/2`, { ...as('alice'), body: { state: 'closed' } });
    const event = await f().app.prisma.comment.findFirst({ where: { type: 2 }, orderBy: { id: 'desc' } });
    expect(event).not.toBeNull();
    expect((await f().request('GET', `${r}/issues/comments/${event!.id}`)).status).toBe(204);
    expect((await f().request('PATCH', `${r}/issues/comments/${event!.id}`, { ...as('alice'), body: { body: 'x' } })).status).toBe(204);
    expect((await f().request('DELETE', `${r}/issues/comments/${event!.id}`, as('alice'))).status).toBe(400);
    // events are not listed as comments
    expect((await f().request('GET', `${r}/issues/2/comments`)).body.every((c: { body: string }) => c.body !== '')).toBe(true);
  });

  test('locked issue: readers cannot comment (403), writers can', async () => {
    await f().app.prisma.issue.updateMany({ where: { title: 'one' }, data: { isLocked: true } });
    expect((await f().request('POST', `${r}/issues/1/comments`, { ...as('carl'), body: { body: 'x' } })).status).toBe(403);
    expect((await f().request('POST', `${r}/issues/1/comments`, { ...as('alice'), body: { body: 'x' } })).status).toBe(201);
    expect((await f().request('GET', `${r}/issues/1`)).body.is_locked).toBe(true);
    await f().app.prisma.issue.updateMany({ where: { title: 'one' }, data: { isLocked: false } });
  });

  test('comment reactions: 201 new, 200 existing, disallowed 403, list, delete 200', async () => {
    const c = (await f().request('GET', `${r}/issues/1/comments`)).body[0];
    let res = await f().request('POST', `${r}/issues/comments/${c.id}/reactions`, { ...as('carl'), body: { content: 'heart' } });
    expect(res.status).toBe(201);
    expect(res.body.content).toBe('heart');
    expect(res.body.user.login).toBe('carl');
    res = await f().request('POST', `${r}/issues/comments/${c.id}/reactions`, { ...as('carl'), body: { content: 'heart' } });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('heart');
    res = await f().request('POST', `${r}/issues/comments/${c.id}/reactions`, { ...as('carl'), body: { content: 'poop' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe("'poop' is not an allowed reaction");
    await f().request('POST', `${r}/issues/comments/${c.id}/reactions`, { ...as('bob'), body: { content: '+1' } });
    res = await f().request('GET', `${r}/issues/comments/${c.id}/reactions`);
    expect(res.body.map((x: { content: string; user: { login: string } }) => `${x.user.login}:${x.content}`)).toEqual(['carl:heart', 'bob:+1']);
    expect((await f().request('DELETE', `${r}/issues/comments/${c.id}/reactions`, { ...as('carl'), body: { content: 'heart' } })).status).toBe(200);
    expect((await f().request('DELETE', `${r}/issues/comments/${c.id}/reactions`, { ...as('carl'), body: { content: 'heart' } })).status).toBe(200);
    expect((await f().request('GET', `${r}/issues/comments/${c.id}/reactions`)).body).toHaveLength(1);
    expect((await f().request('POST', `${r}/issues/comments/${c.id}/reactions`, { body: { content: 'heart' } })).status).toBe(401);
  });

  test('issue reactions: add, list with X-Total-Count, remove; token needs write:issue', async () => {
    let res = await f().request('POST', `${r}/issues/1/reactions`, { ...as('bob'), body: { content: 'rocket' } });
    expect(res.status).toBe(201);
    res = await f().request('GET', `${r}/issues/1/reactions`);
    expect(res.headers.get('x-total-count')).toBe('1');
    expect(res.body[0].content).toBe('rocket');
    const readTok = await f().token('bob', ['read:issue']);
    expect((await f().request('POST', `${r}/issues/1/reactions`, { token: readTok, body: { content: 'eyes' } })).status).toBe(403);
    expect((await f().request('DELETE', `${r}/issues/1/reactions`, { ...as('bob'), body: { content: 'rocket' } })).status).toBe(200);
    expect((await f().request('GET', `${r}/issues/1/reactions`)).body).toEqual([]);
  });
});
