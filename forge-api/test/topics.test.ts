/**
 * Repository topics and topic search, checked against what Gitea 1.27.3 answers (statuses,
 * its own 422 bodies without `url`, X-Total-Count, normalisation and order).
 */
import { describeForge, PASSWORD } from './support/forge';

describeForge('topics', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  beforeAll(async () => {
    await f().user('alice');
    await f().user('bob');
    for (const [owner, name, priv] of [
      ['alice', 'tools', false],
      ['alice', 'secret', true],
      ['bob', 'other', false],
    ] as const) {
      const res = await f().request('POST', '/user/repos', { ...as(owner), body: { name, private: priv } });
      expect(res.status).toBe(201);
    }
  });

  test('a new repository has no topics; its JSON has topics []', async () => {
    const res = await f().request('GET', '/repos/alice/tools/topics');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ topics: [] });
    expect(res.headers.get('x-total-count')).toBe('0');
    expect((await f().request('GET', '/repos/alice/tools')).body.topics).toEqual([]);
  });

  test('PUT replaces: names are trimmed, lower-cased, deduplicated, sorted; invalid names are 422 with Gitea body', async () => {
    let res = await f().request('PUT', '/repos/alice/tools/topics', { ...as('alice'), body: { topics: ['Go', 'a_b', 'x', ' Go ', '-lead'] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ invalidTopics: ['a_b', '-lead'], message: 'Topic names are invalid' });
    expect((await f().request('GET', '/repos/alice/tools/topics')).body.topics).toEqual([]);

    res = await f().request('PUT', '/repos/alice/tools/topics', { ...as('alice'), body: { topics: ['Rust', 'go', 'x', ' GO ', '', 'v1.2-beta'] } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    res = await f().request('GET', '/repos/alice/tools/topics');
    expect(res.body.topics).toEqual(['go', 'rust', 'v1.2-beta', 'x']);
    expect((await f().request('GET', '/repos/alice/tools')).body.topics).toEqual(['go', 'rust', 'v1.2-beta', 'x']);

    // Replacing drops what is not named again.
    expect((await f().request('PUT', '/repos/alice/tools/topics', { ...as('alice'), body: { topics: ['go', 'zig'] } })).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/topics')).body.topics).toEqual(['go', 'zig']);
  });

  test('limits: 35 characters, 25 topics per repository', async () => {
    const long = 'a'.repeat(36);
    let res = await f().request('PUT', '/repos/bob/other/topics', { ...as('bob'), body: { topics: [long] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ invalidTopics: [long], message: 'Topic names are invalid' });
    expect((await f().request('PUT', `/repos/bob/other/topics/${'b'.repeat(35)}`, as('bob'))).status).toBe(204);

    const many = Array.from({ length: 26 }, (_, i) => `t${i}`);
    res = await f().request('PUT', '/repos/bob/other/topics', { ...as('bob'), body: { topics: many } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ invalidTopics: null, message: 'Exceeding maximum number of topics per repo' });

    expect((await f().request('PUT', '/repos/bob/other/topics', { ...as('bob'), body: { topics: many.slice(0, 25) } })).status).toBe(204);
    res = await f().request('PUT', '/repos/bob/other/topics/one-more', as('bob'));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Exceeding maximum allowed topics per repo.' });

    // Paging of a repository's topics: by name, X-Total-Count of all.
    res = await f().request('GET', '/repos/bob/other/topics?limit=10&page=3');
    expect(res.body.topics).toEqual(['t5', 't6', 't7', 't8', 't9']);
    expect(res.headers.get('x-total-count')).toBe('25');
    expect((await f().request('PUT', '/repos/bob/other/topics', { ...as('bob'), body: { topics: [] } })).status).toBe(204);
    expect((await f().request('GET', '/repos/bob/other')).body.topics).toEqual([]);
  });

  test('add and delete one topic: normalised, invalid 422 with a string, missing 404, adding twice is fine', async () => {
    expect((await f().request('PUT', '/repos/alice/tools/topics/CLI', as('alice'))).status).toBe(204);
    expect((await f().request('PUT', '/repos/alice/tools/topics/cli', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools/topics')).body.topics).toEqual(['cli', 'go', 'zig']);

    let res = await f().request('PUT', '/repos/alice/tools/topics/Bad_One', as('alice'));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ invalidTopics: 'bad_one', message: 'Topic name is invalid' });
    res = await f().request('DELETE', '/repos/alice/tools/topics/Bad_One', as('alice'));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ invalidTopics: 'bad_one', message: 'Topic name is invalid' });

    res = await f().request('DELETE', '/repos/alice/tools/topics/nope', as('alice'));
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('not found');

    expect((await f().request('DELETE', '/repos/alice/tools/topics/ZIG', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/tools')).body.topics).toEqual(['cli', 'go']);
  });

  test('permissions: reading follows the repository, changing needs its admin (401, 403, 404)', async () => {
    expect((await f().request('PUT', '/repos/alice/tools/topics', { body: { topics: ['x'] } })).status).toBe(401);
    // Gitea runs reqAdmin before reqToken on one topic: anonymous callers get its 403.
    let res = await f().request('PUT', '/repos/alice/tools/topics/x');
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    expect((await f().request('DELETE', '/repos/alice/tools/topics/go')).status).toBe(403);
    res = await f().request('PUT', '/repos/alice/tools/topics/x', as('bob'));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    expect((await f().request('DELETE', '/repos/alice/tools/topics/go', as('bob'))).status).toBe(403);
    expect((await f().request('PUT', '/repos/alice/tools/topics', { ...as('bob'), body: { topics: [] } })).status).toBe(403);

    expect((await f().request('PUT', '/repos/alice/secret/topics/hidden-gem', as('alice'))).status).toBe(204);
    expect((await f().request('GET', '/repos/alice/secret/topics')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret/topics', as('bob'))).status).toBe(404);
    res = await f().request('GET', '/repos/alice/secret/topics', as('alice'));
    expect(res.body.topics).toEqual(['hidden-gem']);
    expect((await f().request('GET', '/repos/nobody/none/topics')).status).toBe(404);
  });

  test('GET /topics/search: substring of the name, most used first, with repo_count and X-Total-Count', async () => {
    expect((await f().request('PUT', '/repos/bob/other/topics', { ...as('bob'), body: { topics: ['go', 'golang'] } })).status).toBe(204);
    const res = await f().request('GET', '/topics/search?q=GO');
    expect(res.status).toBe(200);
    const names = res.body.topics.map((t: { topic_name: string }) => t.topic_name);
    expect(names[0]).toBe('go');
    expect(new Set(names)).toEqual(new Set(['go', 'golang']));
    expect(res.headers.get('x-total-count')).toBe('2');
    const go = res.body.topics[0];
    expect(Object.keys(go).sort()).toEqual(['created', 'id', 'repo_count', 'topic_name', 'updated']);
    expect(go.repo_count).toBe(2);
    expect(go.id).toEqual(expect.any(Number));
    expect(go.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const page = await f().request('GET', '/topics/search?q=go&limit=1&page=2');
    expect(page.body.topics.map((t: { topic_name: string }) => t.topic_name)).toEqual(['golang']);
    expect((await f().request('GET', '/topics/search?q=nothing-like-this')).body).toEqual({ topics: [] });
  });

  test('repository search: topic=true matches topic names exactly; a plain keyword also matches topics', async () => {
    const names = (res: { body: { data: { full_name: string }[] } }) => res.body.data.map((r) => r.full_name).sort();
    let res = await f().request('GET', '/repos/search?q=go&topic=true');
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['alice/tools', 'bob/other']);
    expect(res.headers.get('x-total-count')).toBe('2');
    res = await f().request('GET', '/repos/search?q=GOLANG&topic=true');
    expect(names(res)).toEqual(['bob/other']);
    expect(names(await f().request('GET', '/repos/search?q=gol&topic=true'))).toEqual([]);
    expect(names(await f().request('GET', '/repos/search?q=cli,golang&topic=true'))).toEqual(['alice/tools', 'bob/other']);
    // A private repository's topics are found only by those who can read it.
    expect(names(await f().request('GET', '/repos/search?q=hidden-gem&topic=true'))).toEqual([]);
    expect(names(await f().request('GET', '/repos/search?q=hidden-gem&topic=true', as('alice')))).toEqual(['alice/secret']);
    // Without topic=true the keyword matches names and topics by substring.
    expect(names(await f().request('GET', '/repos/search?q=lang'))).toEqual(['bob/other']);
    expect(names(await f().request('GET', '/repos/search?q=tool'))).toEqual(['alice/tools']);
  });

  test('deleting a repository drops its topics from the counts', async () => {
    expect((await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'gone' } })).status).toBe(201);
    expect((await f().request('PUT', '/repos/bob/gone/topics/go', as('bob'))).status).toBe(204);
    let go = (await f().request('GET', '/topics/search?q=go')).body.topics.find((t: { topic_name: string }) => t.topic_name === 'go');
    expect(go.repo_count).toBe(3);
    expect((await f().request('DELETE', '/repos/bob/gone', as('bob'))).status).toBe(204);
    go = (await f().request('GET', '/topics/search?q=go')).body.topics.find((t: { topic_name: string }) => t.topic_name === 'go');
    expect(go.repo_count).toBe(2);
  });
});
