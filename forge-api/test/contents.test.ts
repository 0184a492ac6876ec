/**
 * Reading files through the API (contents, contents-ext, file-contents, raw, media) on a
 * repository filled by a real `git push`: shapes, statuses and headers as a real Gitea 1.27.3
 * answered for the same tree (keys, null vs absent fields, URLs, 400/404 messages), and bad
 * paths refused without ever reading outside the repository.
 */
import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import { describeForge, PASSWORD, type Forge } from './support/forge';
import { git } from './support/git';

const LFS_POINTER = 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n';

const ENTRY_KEYS = ['name', 'path', 'sha', 'last_commit_sha', 'last_committer_date', 'last_author_date', 'type', 'size', 'encoding', 'content', 'target', 'url', 'html_url', 'git_url', 'download_url', 'submodule_git_url', '_links'];

async function must(cwd: string, ...args: string[]) {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A repository of alice's with folders, a symlink, binary data, an LFS pointer and a submodule, pushed with git. */
export async function fillRepository(forge: Forge, owner: string, name: string): Promise<{ work: string; head: string }> {
  const created = await forge.request('POST', '/user/repos', { basic: [owner, PASSWORD], body: { name, auto_init: true } });
  expect(created.status).toBe(201);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'contents-work-'));
  const remote = new URL(`${forge.url}/${owner}/${name}.git`);
  remote.username = owner;
  remote.password = PASSWORD;
  await must(work, 'clone', '-q', remote.toString(), '.');
  await fs.mkdir(path.join(work, 'd', 'sub'), { recursive: true });
  await fs.writeFile(path.join(work, 'd', 'a.txt'), 'hi\n');
  await fs.writeFile(path.join(work, 'd', 'sub', 's.txt'), 's\n');
  await fs.symlink('d/a.txt', path.join(work, 'link'));
  await fs.symlink('../../../../etc/passwd', path.join(work, 'escape'));
  await fs.writeFile(path.join(work, 'lfs.bin'), LFS_POINTER);
  await fs.writeFile(path.join(work, 'bin.dat'), Buffer.from([0, 1, 0x62, 0x69, 0x6e]));
  await fs.writeFile(path.join(work, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
  await fs.writeFile(path.join(work, 'image.png'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 7)]));
  await fs.writeFile(path.join(work, 'big.txt'), 'x'.repeat(300_000));
  await fs.writeFile(path.join(work, '.gitmodules'), '[submodule "sm"]\n\tpath = sm\n\turl = https://example.com/sm.git\n');
  await must(work, 'add', '-A');
  await must(work, 'commit', '-q', '-m', 'add files');
  const first = (await must(work, 'rev-parse', 'HEAD')).trim();
  await must(work, 'update-index', '--add', '--cacheinfo', `160000,${first},sm`);
  await must(work, 'commit', '-q', '-m', 'sub');
  await must(work, 'tag', 'v1');
  await must(work, 'push', '-q', 'origin', 'main', 'v1');
  return { work, head: (await must(work, 'rev-parse', 'HEAD')).trim() };
}

describeForge('contents (reads)', (f) => {
  let head: string;
  let work: string;
  const auth = { basic: ['alice', PASSWORD] as [string, string] };

  beforeAll(async () => {
    await f().user('alice');
    await f().user('eve');
    ({ head, work } = await fillRepository(f(), 'alice', 'r'));
    const priv = await f().request('POST', '/user/repos', { ...auth, body: { name: 'secret', private: true, auto_init: true } });
    expect(priv.status).toBe(201);
  });
  afterAll(async () => {
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  it('lists the root with Gitea keys, types, sizes and links', async () => {
    const res = await f().request('GET', '/repos/alice/r/contents');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.map((e: any) => [e.name, e]));
    expect(Object.keys(byName)).toEqual(['.gitmodules', 'README.md', 'big.txt', 'bin.dat', 'd', 'escape', 'image.png', 'lfs.bin', 'link', 'run.sh', 'sm']);
    for (const e of res.body) expect(Object.keys(e)).toEqual(ENTRY_KEYS);
    const api = `${f().url}/api/v1/repos/alice/r`;
    const web = `${f().url}/alice/r`;
    expect(byName.d).toMatchObject({ type: 'dir', size: 0, encoding: null, content: null, download_url: null, html_url: `${web}/src/branch/main/d`, url: `${api}/contents/d?ref=main` });
    expect(byName.d.git_url).toBe(`${api}/git/blobs/${byName.d.sha}`);
    expect(byName['README.md']).toMatchObject({ type: 'file', encoding: null, content: null, download_url: `${web}/raw/branch/main/README.md` });
    expect(byName.link).toMatchObject({ type: 'symlink', target: 'd/a.txt', size: 7 });
    expect(byName.escape).toMatchObject({ type: 'symlink', target: '../../../../etc/passwd' });
    expect(byName.sm).toMatchObject({ type: 'submodule', html_url: null, git_url: null, download_url: null, submodule_git_url: 'https://example.com/sm.git', _links: { git: null, html: null } });
    expect(byName['run.sh'].type).toBe('file');
    expect(byName['lfs.bin'].lfs_oid).toBeUndefined();
    expect(byName['README.md'].last_commit_sha).not.toBe(head);
    expect(byName.sm.last_commit_sha).toBe(head);
    expect(byName['README.md'].last_committer_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('reads a file with its content, and an LFS pointer with its oid and size', async () => {
    const res = await f().request('GET', '/repos/alice/r/contents/d/a.txt?ref=v1');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'a.txt', path: 'd/a.txt', type: 'file', size: 3, encoding: 'base64', content: Buffer.from('hi\n').toString('base64') });
    expect(res.body.url).toBe(`${f().url}/api/v1/repos/alice/r/contents/d/a.txt?ref=v1`);
    expect(res.body.html_url).toBe(`${f().url}/alice/r/src/tag/v1/d/a.txt`);
    const lfs = await f().request('GET', '/repos/alice/r/contents/lfs.bin');
    expect(lfs.body).toMatchObject({ lfs_oid: '4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393', lfs_size: 12345 });
    expect(Object.keys(lfs.body).slice(-2)).toEqual(['lfs_oid', 'lfs_size']);
    const byCommit = await f().request('GET', `/repos/alice/r/contents/d?ref=${head}`);
    expect(byCommit.body.map((e: any) => e.name)).toEqual(['a.txt', 'sub']);
    expect(byCommit.body[0].html_url).toBe(`${f().url}/alice/r/src/commit/${head}/d/a.txt`);
  });

  it('answers missing refs and paths with Gitea 404 messages', async () => {
    const nope = await f().request('GET', '/repos/alice/r/contents/nope');
    expect(nope.status).toBe(404);
    expect(nope.body.message).toBe('object does not exist [id: , rel_path: nope]');
    const ref = await f().request('GET', '/repos/alice/r/contents/README.md?ref=nope');
    expect(ref.status).toBe(404);
    expect(ref.body.message).toBe('object does not exist [id: nope, rel_path: ]');
    const short = await f().request('GET', `/repos/alice/r/contents/README.md?ref=${head.slice(0, 10)}`);
    expect(short.status).toBe(404);
    const revSyntax = await f().request('GET', '/repos/alice/r/contents/README.md?ref=main~1');
    expect(revSyntax.status).toBe(404);
  });

  it.each([
    ['.git%2Fconfig', '.git/config'],
    ['d%2F..%2F..%2F..%2Fetc%2Fpasswd', 'd/../../../etc/passwd'],
    ['%2Fetc%2Fpasswd', '/etc/passwd'],
    ['a%00b', null],
    [`${'x'.repeat(300)}`, 'x'.repeat(300)],
  ])('refuses the path %s with a 4xx and never reads outside the tree', async (encoded, shown) => {
    for (const prefix of ['contents', 'contents-ext', 'raw', 'media']) {
      const res = await f().request('GET', `/repos/alice/r/${prefix}/${encoded}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.text).not.toContain('root:');
      if (prefix === 'contents' && shown) expect(res.body.message).toBe(`path contains a malformed path component [path: ${shown}]`);
    }
  });

  it('serves a symlink out of the tree as its target text, never the file it points to', async () => {
    const raw = await f().request('GET', '/repos/alice/r/raw/escape');
    expect(raw.status).toBe(200);
    expect(raw.text).toBe('../../../../etc/passwd');
    expect(raw.headers.get('x-gitea-object-type')).toBe('symlink');
  });

  it('contents-ext: includes, folder listing and unknown includes (400)', async () => {
    const dir = await f().request('GET', '/repos/alice/r/contents-ext/d?includes=file_content,lfs_metadata,commit_metadata,commit_message');
    expect(dir.status).toBe(200);
    expect(Object.keys(dir.body)).toEqual(['dir_contents']);
    expect(dir.body.dir_contents[0]).toMatchObject({ name: 'a.txt', encoding: null, last_commit_message: 'add files\n' });
    const file = await f().request('GET', '/repos/alice/r/contents-ext/d/a.txt');
    expect(Object.keys(file.body)).toEqual(['file_contents']);
    expect(file.body.file_contents.last_commit_sha).toBeUndefined();
    expect(file.body.file_contents.content).toBeNull();
    const withContent = await f().request('GET', '/repos/alice/r/contents-ext/d/a.txt?includes=file_content');
    expect(withContent.body.file_contents.content).toBe(Buffer.from('hi\n').toString('base64'));
    const lfs = await f().request('GET', '/repos/alice/r/contents-ext/lfs.bin?includes=lfs_metadata');
    expect(lfs.body.file_contents).toMatchObject({ lfs_oid: expect.any(String), lfs_size: 12345, content: null });
    const root = await f().request('GET', '/repos/alice/r/contents-ext/.');
    expect(root.body.dir_contents.length).toBe(11);
    const bad = await f().request('GET', '/repos/alice/r/contents-ext/?includes=bogus');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('unknown include option "bogus"');
  });

  it('file-contents (GET with ?body= and POST): nulls for missing paths', async () => {
    const body = JSON.stringify({ files: ['README.md', 'nope', 'd'] });
    const get = await f().request('GET', `/repos/alice/r/file-contents?body=${encodeURIComponent(body)}`);
    expect(get.status).toBe(200);
    expect(get.body.map((e: any) => e && e.type)).toEqual(['file', null, 'dir']);
    expect(get.body[0].content).toBe(Buffer.from('# r\n\n').toString('base64'));
    const post = await f().request('POST', '/repos/alice/r/file-contents?ref=v1', { ...auth, body: { files: ['d/a.txt', '.git/config'] } });
    expect(post.status).toBe(200);
    expect(post.body[0].path).toBe('d/a.txt');
    expect(post.body[1]).toBeNull();
    const invalid = await f().request('GET', '/repos/alice/r/file-contents');
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe('invalid body parameter');
  });

  it('raw: Gitea headers, ref in the path or the query, 304, 404 for folders', async () => {
    const res = await f().request('GET', '/repos/alice/r/raw/README.md');
    expect(res.status).toBe(200);
    expect(res.text).toBe('# r\n\n');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('inline; filename=README.md');
    expect(res.headers.get('cache-control')).toBe('public, max-age=21600');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-gitea-object-type')).toBe('file');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(res.headers.get('last-modified')).toMatch(/GMT$/);
    const cached = await f().request('GET', '/repos/alice/r/raw/README.md', { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect((await f().request('GET', '/repos/alice/r/raw/main/d/a.txt')).text).toBe('hi\n');
    expect((await f().request('GET', '/repos/alice/r/raw/v1/d/a.txt')).text).toBe('hi\n');
    expect((await f().request('GET', `/repos/alice/r/raw/${head}/d/a.txt`)).text).toBe('hi\n');
    expect((await f().request('GET', '/repos/alice/r/raw/d/a.txt?ref=v1')).text).toBe('hi\n');
    const bin = await f().request('GET', '/repos/alice/r/raw/bin.dat');
    expect(bin.headers.get('content-type')).toBe('application/octet-stream');
    const png = await f().request('GET', '/repos/alice/r/raw/image.png');
    expect(png.headers.get('content-type')).toBe('image/png');
    const big = await f().request('GET', '/repos/alice/r/raw/big.txt');
    expect(big.text.length).toBe(300_000);
    expect(big.headers.get('content-length')).toBe('300000');
    expect((await f().request('GET', '/repos/alice/r/raw/d')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/r/raw/sm')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/r/raw/nope')).status).toBe(404);
  });

  it('media: small blobs and LFS pointers are written as they are (no LFS store)', async () => {
    const res = await f().request('GET', '/repos/alice/r/media/lfs.bin');
    expect(res.status).toBe(200);
    expect(res.text).toBe(LFS_POINTER);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBeNull();
    expect(res.headers.get('x-gitea-object-type')).toBe('file');
    const big = await f().request('GET', '/repos/alice/r/media/image.png');
    expect(big.headers.get('content-disposition')).toBe('inline; filename=image.png');
  });

  it('private repositories: 404 for strangers, private cache for readers', async () => {
    expect((await f().request('GET', '/repos/alice/secret/contents')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret/raw/README.md', { basic: ['eve', PASSWORD] })).status).toBe(404);
    const mine = await f().request('GET', '/repos/alice/secret/raw/README.md', auth);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('cache-control')).toBe('private, max-age=21600');
  });

  it('an empty repository lists an empty root and 404s a file', async () => {
    expect((await f().request('POST', '/user/repos', { ...auth, body: { name: 'empty' } })).status).toBe(201);
    const root = await f().request('GET', '/repos/alice/empty/contents', auth);
    expect(root.status).toBe(200);
    expect(root.body).toEqual([]);
    expect((await f().request('GET', '/repos/alice/empty/contents/README.md', auth)).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/empty/raw/README.md', auth)).status).toBe(404);
  });
});
