/**
 * Releases and release assets, as Gitea 1.27.3 answers them (shapes, statuses and messages
 * were taken from a real 1.27.3): the tag is created in the real git repository, drafts have
 * none and show only to writers, deleting a release keeps its tag, assets upload as multipart
 * or as a raw body and download byte for byte (counted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from './support/git';
import { describeForge, PASSWORD } from './support/forge';

describeForge('releases', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const tagsOnDisk = async () => (await git(path.join(f().dataDir, 'repositories', 'alice', 'app.git'), 'tag', '--list')).stdout.split('\n').filter(Boolean).sort();
  let work: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'releases-'));
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'app', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'blank' } })).status).toBe(201);
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('create: the tag is made at the default branch; Gitea Release JSON', async () => {
    const res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v1.0', name: 'First', body: 'notes' } });
    expect(res.status).toBe(201);
    const base = `${f().url}/alice/app`;
    expect(res.body).toMatchObject({
      tag_name: 'v1.0',
      target_commitish: 'main',
      name: 'First',
      body: 'notes',
      url: `${f().url}/api/v1/repos/alice/app/releases/${res.body.id}`,
      html_url: `${base}/releases/tag/v1.0`,
      tarball_url: `${base}/archive/v1.0.tar.gz`,
      zipball_url: `${base}/archive/v1.0.zip`,
      upload_url: `${f().url}/api/v1/repos/alice/app/releases/${res.body.id}/assets`,
      draft: false,
      prerelease: false,
      assets: [],
    });
    expect(Object.keys(res.body).sort()).toEqual(
      ['assets', 'author', 'body', 'created_at', 'draft', 'html_url', 'id', 'name', 'prerelease', 'published_at', 'tag_name', 'tarball_url', 'target_commitish', 'upload_url', 'url', 'zipball_url'],
    );
    expect(res.body.author.login).toBe('alice');
    expect(res.body.created_at).toBe(res.body.published_at);
    expect(await tagsOnDisk()).toEqual(['v1.0']);
    const main = (await git(path.join(f().dataDir, 'repositories', 'alice', 'app.git'), 'rev-parse', 'main')).stdout.trim();
    expect((await git(path.join(f().dataDir, 'repositories', 'alice', 'app.git'), 'rev-parse', 'v1.0^{commit}')).stdout.trim()).toBe(main);
    expect((await f().request('GET', '/repos/alice/app')).body.release_counter).toBe(1);
  });

  test('create errors: 409 existing release, 422 empty repository / no tag_name / bad tag, 404 unknown target', async () => {
    let res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v1.0' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('Release is has no Tag');
    res = await f().request('POST', '/repos/alice/blank/releases', { ...as('alice'), body: { tag_name: 'v1' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('repo is empty');
    res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: {} });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[TagName]: Required');
    // Gitea 1.27.3 answers this one with a 500; the message is kept, the status is a 422.
    res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'bad..tag' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('release tag name is not valid [tag_name: bad..tag]');
    res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v2', target_commitish: 'nope' } });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('target not found');
    expect(await tagsOnDisk()).toEqual(['v1.0']);
  });

  test('permissions: 401 anonymous, 403 non-writer; reading follows the release unit', async () => {
    expect((await f().request('POST', '/repos/alice/app/releases', { body: { tag_name: 'x' } })).status).toBe(401);
    const res = await f().request('POST', '/repos/alice/app/releases', { ...as('bob'), body: { tag_name: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should have a permission to write to a repo');
    expect((await f().request('GET', '/repos/alice/app/releases')).status).toBe(200);
    expect((await f().request('GET', '/repos/nobody/app/releases')).status).toBe(404);
  });

  test('drafts have no tag and show only to writers; pre-releases; filters, paging and latest', async () => {
    const draft = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v3-draft', draft: true } });
    expect(draft.status).toBe(201);
    expect(draft.body.draft).toBe(true);
    const pre = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v4', prerelease: true, tag_message: 'annotated' } });
    expect(pre.status).toBe(201);
    expect(await tagsOnDisk()).toEqual(['v1.0', 'v4']);
    expect((await git(path.join(f().dataDir, 'repositories', 'alice', 'app.git'), 'cat-file', '-t', 'v4')).stdout.trim()).toBe('tag');

    const tagsOf = (res: { body: { tag_name: string }[] }) => res.body.map((r) => r.tag_name);
    let res = await f().request('GET', '/repos/alice/app/releases', as('alice'));
    expect(tagsOf(res)).toEqual(['v4', 'v3-draft', 'v1.0']);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases', as('bob')))).toEqual(['v4', 'v1.0']);
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases'))).toEqual(['v4', 'v1.0']);
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases?draft=true', as('alice')))).toEqual(['v3-draft']);
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases?draft=true', as('bob')))).toEqual([]);
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases?pre-release=false', as('alice')))).toEqual(['v3-draft', 'v1.0']);
    res = await f().request('GET', '/repos/alice/app/releases?limit=1&page=2', as('alice'));
    expect(tagsOf(res)).toEqual(['v3-draft']);
    expect(res.headers.get('link')).toContain('rel="next"');

    expect((await f().request('GET', `/repos/alice/app/releases/${draft.body.id}`, as('bob'))).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/app/releases/tags/v3-draft', as('bob'))).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/app/releases/tags/V3-DRAFT', as('alice'))).body.id).toBe(draft.body.id);
    expect((await f().request('GET', '/repos/alice/app/releases/latest')).body.tag_name).toBe('v1.0');
    expect((await f().request('GET', '/repos/alice/app/releases/999999')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/app/releases/tags/nope')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/app')).body.release_counter).toBe(2);

    // A read-only token of a writer does not see drafts (Gitea's canAccessReleaseDraft).
    const readOnly = await f().token('alice', ['read:repository']);
    expect(tagsOf(await f().request('GET', '/repos/alice/app/releases', { token: readOnly }))).toEqual(['v4', 'v1.0']);
  });

  test('edit: publishing a draft creates its tag; renaming the tag creates the new one and keeps the old', async () => {
    const draft = (await f().request('GET', '/repos/alice/app/releases/tags/v3-draft', as('alice'))).body;
    let res = await f().request('PATCH', `/repos/alice/app/releases/${draft.id}`, { ...as('alice'), body: { draft: false, name: 'pub' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ draft: false, name: 'pub', tag_name: 'v3-draft' });
    expect(await tagsOnDisk()).toEqual(['v1.0', 'v3-draft', 'v4']);
    const v1 = (await f().request('GET', '/repos/alice/app/releases/tags/v1.0')).body;
    res = await f().request('PATCH', `/repos/alice/app/releases/${v1.id}`, { ...as('alice'), body: { tag_name: 'v1.0-renamed', body: '' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tag_name: 'v1.0-renamed', name: 'First', body: 'notes', html_url: `${f().url}/alice/app/releases/tag/v1.0-renamed` });
    expect(await tagsOnDisk()).toEqual(['v1.0', 'v1.0-renamed', 'v3-draft', 'v4']);
    expect((await f().request('PATCH', `/repos/alice/app/releases/${v1.id}`, { ...as('bob'), body: { name: 'x' } })).status).toBe(403);
    expect((await f().request('PATCH', '/repos/alice/app/releases/999999', { ...as('alice'), body: { name: 'x' } })).status).toBe(404);
  });

  test('assets: multipart and raw uploads, listed by name with download-by-name URLs, edited (201), downloaded byte for byte and counted, deleted', async () => {
    const rel = (await f().request('GET', '/repos/alice/app/releases/tags/v1.0-renamed')).body;
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13, 0x7f]);
    const form = new FormData();
    form.append('attachment', new Blob([bytes]), 'tool.bin');
    const auth = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
    let res = await fetch(`${f().api}/repos/alice/app/releases/${rel.id}/assets`, { method: 'POST', headers: { authorization: auth }, body: form });
    expect(res.status).toBe(201);
    const multi = (await res.json()) as any;
    expect(multi).toMatchObject({ name: 'tool.bin', size: bytes.length, download_count: 0, browser_download_url: `${f().url}/attachments/${multi.uuid}` });
    expect(Object.keys(multi).sort()).toEqual(['browser_download_url', 'created_at', 'download_count', 'id', 'name', 'size', 'uuid']);

    res = await fetch(`${f().api}/repos/alice/app/releases/${rel.id}/assets?name=app.exe`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: bytes });
    expect(res.status).toBe(201);
    const raw = (await res.json()) as any;
    expect(raw).toMatchObject({ name: 'app.exe', size: bytes.length });

    res = await fetch(`${f().api}/repos/alice/app/releases/${rel.id}/assets`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: bytes });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).message).toBe('Could not determine name of attachment.');
    res = await fetch(`${f().api}/repos/alice/app/releases/${rel.id}/assets?name=x.bin`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`bob:${PASSWORD}`).toString('base64')}` }, body: form });
    expect(res.status).toBe(403);

    const list = await f().request('GET', `/repos/alice/app/releases/${rel.id}/assets`);
    expect(list.body.map((a: { name: string }) => a.name)).toEqual(['app.exe', 'tool.bin']);
    expect(list.body[1].browser_download_url).toBe(`${f().url}/alice/app/releases/download/v1.0-renamed/tool.bin`);
    expect((await f().request('GET', '/repos/alice/app/releases/tags/v1.0-renamed')).body.assets).toHaveLength(2);

    const down = await fetch(`${f().url}/attachments/${multi.uuid}`);
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
    const byName = await fetch(list.body[0].browser_download_url);
    expect(byName.status).toBe(200);
    expect(Buffer.from(await byName.arrayBuffer()).equals(bytes)).toBe(true);
    expect((await f().request('GET', `/repos/alice/app/releases/${rel.id}/assets/${multi.id}`)).body.download_count).toBe(1);

    let edit = await f().request('PATCH', `/repos/alice/app/releases/${rel.id}/assets/${multi.id}`, { ...as('alice'), body: { name: 'tool-v1.bin' } });
    expect(edit.status).toBe(201);
    expect(edit.body.name).toBe('tool-v1.bin');
    edit = await f().request('PATCH', `/repos/alice/app/releases/${rel.id}/assets/${multi.id}`, { ...as('bob'), body: { name: 'x' } });
    expect(edit.status).toBe(403);

    // An asset of another release is not found through this one.
    const other = (await f().request('GET', '/repos/alice/app/releases/tags/v4')).body;
    expect((await f().request('GET', `/repos/alice/app/releases/${other.id}/assets/${multi.id}`)).status).toBe(404);

    expect((await f().request('DELETE', `/repos/alice/app/releases/${rel.id}/assets/${raw.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('DELETE', `/repos/alice/app/releases/${rel.id}/assets/${raw.id}`, as('alice'))).status).toBe(404);
    expect((await fetch(`${f().url}/attachments/${raw.uuid}`)).status).toBe(404);
  });

  test('delete keeps the tag; delete by tag; assets go with the release', async () => {
    const rel = (await f().request('GET', '/repos/alice/app/releases/tags/v1.0-renamed')).body;
    const asset = rel.assets[0];
    expect((await f().request('DELETE', `/repos/alice/app/releases/${rel.id}`, as('bob'))).status).toBe(403);
    expect((await f().request('DELETE', `/repos/alice/app/releases/${rel.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('GET', `/repos/alice/app/releases/${rel.id}`)).status).toBe(404);
    expect((await fetch(`${f().url}/attachments/${asset.uuid}`)).status).toBe(404);
    expect((await f().request('DELETE', '/repos/alice/app/releases/tags/v4', as('alice'))).status).toBe(204);
    expect((await f().request('DELETE', '/repos/alice/app/releases/tags/v4', as('alice'))).status).toBe(404);
    expect(await tagsOnDisk()).toEqual(['v1.0', 'v1.0-renamed', 'v3-draft', 'v4']);
    // The tag is still there, so a new release on it just uses it.
    const again = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'v4', name: 'again' } });
    expect(again.status).toBe(201);
    expect((await f().request('GET', '/repos/alice/app')).body.release_counter).toBe(2);
  });

  test('a tag deleted by a git push turns its release into a draft', async () => {
    const u = new URL(`${f().url}/alice/app.git`);
    u.username = 'alice';
    u.password = PASSWORD;
    const dir = path.join(work, 'clone');
    expect((await git(work, 'clone', u.toString(), dir)).exitCode).toBe(0);
    const pushed = await git(dir, 'push', 'origin', ':refs/tags/v4');
    expect(pushed.exitCode).toBe(0);
    const rel = await f().request('GET', '/repos/alice/app/releases/tags/v4', as('alice'));
    expect(rel.body.draft).toBe(true);
    expect((await f().request('GET', '/repos/alice/app/releases/tags/v4')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/app')).body.release_counter).toBe(1);
  });

  test('tag protections apply to the tag a release creates (for its publisher); DELETE /tags of a released tag is 409', async () => {
    expect((await f().request('PUT', '/repos/alice/app/collaborators/bob', { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
    const pt = await f().request('POST', '/repos/alice/app/tag_protections', { ...as('alice'), body: { name_pattern: 'prot-*', whitelist_usernames: ['alice'] } });
    expect(pt.status).toBe(201);
    let res = await f().request('POST', '/repos/alice/app/releases', { ...as('bob'), body: { tag_name: 'prot-1', name: 'no' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('release tag name is protected [tag_name: prot-1]');
    expect(await tagsOnDisk()).not.toContain('prot-1');
    // A draft makes no tag; publishing it later checks the publisher (bob), not the editor.
    const draft = await f().request('POST', '/repos/alice/app/releases', { ...as('bob'), body: { tag_name: 'prot-2', draft: true } });
    expect(draft.status).toBe(201);
    res = await f().request('PATCH', `/repos/alice/app/releases/${draft.body.id}`, { ...as('alice'), body: { draft: false } });
    expect(res.status).toBe(422);
    expect(await tagsOnDisk()).not.toContain('prot-2');
    res = await f().request('POST', '/repos/alice/app/releases', { ...as('alice'), body: { tag_name: 'prot-3', name: 'yes' } });
    expect(res.status).toBe(201);
    expect(await tagsOnDisk()).toContain('prot-3');
    // An existing tag is not created again, so the protection does not stop a release on it.
    res = await f().request('POST', '/repos/alice/app/releases', { ...as('bob'), body: { tag_name: 'v1.0-renamed', name: 'on an existing tag' } });
    expect(res.status).toBe(201);

    res = await f().request('DELETE', '/repos/alice/app/tags/prot-3', as('alice'));
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('a tag attached to a release cannot be deleted directly');
    expect(await tagsOnDisk()).toContain('prot-3');
    expect((await f().request('GET', '/repos/alice/app/releases/tags/prot-3', as('alice'))).body.draft).toBe(false);
  });
});
