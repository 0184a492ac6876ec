/**
 * /repos/{owner}/{repo}/tags: Gitea 1.27.3's Tag JSON for lightweight and annotated tags,
 * paging, creation on a branch or commit, deletion, errors; real git sees the tags.
 * SQLite and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('tags', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let work: string;
  let head: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'tags-'));
    await f().user('owner');
    await f().user('reader');
    expect((await f().request('POST', '/user/repos', { ...as('owner'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('owner'), body: { name: 'empty' } })).status).toBe(201);
    head = (await f().request('GET', '/repos/owner/proj/branches/main', as('owner'))).body.commit.id;
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('create lightweight and annotated tags; Gitea\'s Tag JSON', async () => {
    const light = await f().request('POST', '/repos/owner/proj/tags', { ...as('owner'), body: { tag_name: 'v1.0.0' } });
    expect(light.status).toBe(201);
    expect(light.body).toEqual({
      name: 'v1.0.0',
      message: 'Initial commit\n',
      id: head,
      commit: { url: `${f().api}/repos/owner/proj/git/commits/${head}`, sha: head, created: expect.stringMatching(/Z$/) },
      zipball_url: `${f().url}/owner/proj/archive/v1.0.0.zip`,
      tarball_url: `${f().url}/owner/proj/archive/v1.0.0.tar.gz`,
    });
    const annotated = await f().request('POST', '/repos/owner/proj/tags', { ...as('owner'), body: { tag_name: 'release/2', message: 'Second release', target: head } });
    expect(annotated.status).toBe(201);
    expect(annotated.body.message).toBe('Second release\n');
    expect(annotated.body.id).not.toBe(head); // the tag object
    expect(annotated.body.commit.sha).toBe(head);
    expect(annotated.body.tarball_url).toBe(`${f().url}/owner/proj/archive/release%2F2.tar.gz`);
    // git sees an annotated tag by the doer
    const bare = path.join(work, 'clone');
    expect((await git(work, 'clone', '-q', `${f().url}/owner/proj.git`, bare)).exitCode).toBe(0);
    expect((await git(bare, 'cat-file', '-t', 'release/2')).stdout.trim()).toBe('tag');
    expect((await git(bare, 'for-each-ref', '--format=%(taggername) %(taggeremail)', 'refs/tags/release/2')).stdout.trim()).toBe('owner <owner@example.com>');
    expect((await git(bare, 'rev-parse', 'v1.0.0')).stdout.trim()).toBe(head);
  });

  test('get and list with paging', async () => {
    expect((await f().request('GET', '/repos/owner/proj/tags/release/2')).body.name).toBe('release/2');
    expect(await f().request('GET', '/repos/owner/proj/tags/nope')).toMatchObject({ status: 404, body: { message: "tag doesn't exist: nope" } });
    const all = await f().request('GET', '/repos/owner/proj/tags');
    expect(all.headers.get('x-total-count')).toBe('2');
    expect(all.body.map((t: { name: string }) => t.name).sort()).toEqual(['release/2', 'v1.0.0']);
    const one = await f().request('GET', '/repos/owner/proj/tags?limit=1&page=2');
    expect(one.body).toHaveLength(1);
    expect((await f().request('GET', '/repos/owner/empty/tags')).body).toEqual([]);
  });

  test('create and delete: Gitea\'s errors', async () => {
    const post = (body: object, who = 'owner') => f().request('POST', '/repos/owner/proj/tags', { ...as(who), body });
    expect(await post({ tag_name: 'v1.0.0' })).toMatchObject({ status: 409, body: { message: 'tag already exists [name: v1.0.0]' } });
    expect(await post({ tag_name: 'x', target: 'nope' })).toMatchObject({ status: 404, body: { message: 'target not found: object does not exist [id: nope, rel_path: ]' } });
    // Gitea answers 500 for a name git refuses; the forge says what is wrong.
    expect(await post({ tag_name: 'a..b' })).toMatchObject({ status: 422, body: { message: 'release tag name is not valid [tag_name: a..b]' } });
    expect((await post({})).status).toBe(422);
    expect((await post({ tag_name: 'y' }, 'reader')).status).toBe(403);
    expect((await f().request('POST', '/repos/owner/proj/tags', { body: { tag_name: 'y' } })).status).toBe(401);
    expect((await f().request('POST', '/repos/owner/empty/tags', { ...as('owner'), body: { tag_name: 'y' } })).status).toBe(404);

    expect((await f().request('DELETE', '/repos/owner/proj/tags/release/2', as('reader'))).status).toBe(403);
    expect((await f().request('DELETE', '/repos/owner/proj/tags/release/2', as('owner'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/owner/proj/tags/release/2', as('owner'))).status).toBe(404);
    // A tag a release is made on goes with its release, not alone (Gitea's 409).
    expect((await f().request('POST', '/repos/owner/proj/releases', { ...as('owner'), body: { tag_name: 'shipped', name: 'Shipped' } })).status).toBe(201);
    expect(await f().request('DELETE', '/repos/owner/proj/tags/shipped', as('owner'))).toMatchObject({ status: 409, body: { message: 'a tag attached to a release cannot be deleted directly' } });
    const remote = await git(work, 'ls-remote', '--tags', `${f().url}/owner/proj.git`);
    expect(remote.stdout).not.toContain('release/2');
    expect(remote.stdout).toContain('refs/tags/v1.0.0');
  });
});
