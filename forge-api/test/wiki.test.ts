/**
 * The wiki API over `<repo>.wiki.git`, as Gitea 1.27.3 answers (shapes, 400/404 bodies and file
 * names were taken from a real 1.27.3), and the same repository through real git: a page made
 * through the API is in a clone; a page pushed with git is read back through the API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from './support/git';
import { describeForge, PASSWORD } from './support/forge';
import { gitPathToWebPath, titleToWebPath, webPathToGitPath, webPathToTitle } from '../src/services/wiki-names';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('wiki page names (Gitea wiki_path.go)', () => {
  test.each([
    ['Home Page', 'Home-Page', 'Home-Page.md'],
    ['a-b.md', 'a-b.md.-', 'a-b.md.-.md'],
    ['Install & Run?', 'Install-%26-Run%3F', 'Install-%26-Run%3F.md'],
    ['a/b', 'a%2Fb', 'a%2Fb.md'],
  ])('%s -> web %s -> file %s', (title, web, file) => {
    expect(titleToWebPath(title)).toBe(web);
    expect(webPathToGitPath(web)).toBe(file);
    expect(gitPathToWebPath(file)).toBe(web);
    expect(webPathToTitle(web)).toBe(title);
  });
  test('empty titles are "unnamed"; files that are not .md are not pages', () => {
    expect(titleToWebPath('  ')).toBe('unnamed');
    expect(gitPathToWebPath('image.png')).toBeNull();
  });
});

describeForge('wiki', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let work: string;
  const remote = (user: string) => {
    const u = new URL(`${f().url}/alice/docs.wiki.git`);
    u.username = user;
    u.password = PASSWORD;
    return u.toString();
  };

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'wiki-'));
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'docs', auto_init: true } })).status).toBe(201);
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('no wiki yet: 404; anonymous and non-writers cannot create', async () => {
    expect((await f().request('GET', '/repos/alice/docs/wiki/pages')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/docs/wiki/page/Home')).status).toBe(404);
    expect((await f().request('POST', '/repos/alice/docs/wiki/new', { body: { title: 'x', content_base64: b64('x') } })).status).toBe(401);
    const res = await f().request('POST', '/repos/alice/docs/wiki/new', { ...as('bob'), body: { title: 'x', content_base64: b64('x') } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should have a permission to write to a repo');
  });

  test('create: Gitea WikiPage JSON, the commit in <repo>.wiki.git by the doer', async () => {
    const res = await f().request('POST', '/repos/alice/docs/wiki/new', { ...as('alice'), body: { title: 'Home Page', content_base64: b64('# Hi') } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      title: 'Home Page',
      html_url: `${f().url}/alice/docs/wiki/Home-Page`,
      sub_url: 'Home-Page',
      content_base64: b64('# Hi'),
      commit_count: 1,
      sidebar: '',
      footer: '',
      last_commit: { author: { name: 'alice', email: 'alice@example.com' }, commiter: { name: 'alice', email: 'alice@example.com' }, message: 'Add "Home Page"\n' },
    });
    expect(res.body.last_commit.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(res.body.last_commit.author.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const wikiDir = path.join(f().dataDir, 'repositories', 'alice', 'docs.wiki.git');
    expect((await git(wikiDir, 'ls-tree', '--name-only', 'main')).stdout.trim()).toBe('Home-Page.md');
  });

  test('create errors are 400 with Gitea messages', async () => {
    const post = (body: object) => f().request('POST', '/repos/alice/docs/wiki/new', { ...as('alice'), body });
    let res = await post({ title: 'Home Page', content_base64: b64('again') });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('wiki page already exists [title: Home-Page.md]');
    res = await post({ title: '_pages', content_base64: b64('x') });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('wiki title is reserved: _pages');
    res = await post({ title: '', content_base64: b64('x') });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('title is required');
    res = await post({ title: 'x', content_base64: '!!' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('illegal base64 data at input byte 0');
  });

  test('pages, sidebar, revisions, edit with rename, delete', async () => {
    expect((await f().request('POST', '/repos/alice/docs/wiki/new', { ...as('alice'), body: { title: 'a-b.md', content_base64: b64('x'), message: 'custom' } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/docs/wiki/new', { ...as('alice'), body: { title: '_Sidebar', content_base64: b64('side') } })).status).toBe(201);
    let res = await f().request('GET', '/repos/alice/docs/wiki/pages');
    expect(res.status).toBe(200);
    expect(res.body.map((p: { sub_url: string }) => p.sub_url)).toEqual(['Home-Page', '_Sidebar', 'a-b.md.-']);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(Object.keys(res.body[0]).sort()).toEqual(['html_url', 'last_commit', 'sub_url', 'title']);
    expect(res.body[2]).toMatchObject({ title: 'a-b.md', last_commit: { message: 'custom\n' } });

    res = await f().request('GET', '/repos/alice/docs/wiki/page/Home-Page');
    expect(res.body.sidebar).toBe(b64('side'));

    res = await f().request('PATCH', '/repos/alice/docs/wiki/page/Home-Page', { ...as('alice'), body: { title: 'Home Page', content_base64: b64('v2') } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sub_url: 'Home-Page', content_base64: b64('v2'), commit_count: 2, last_commit: { message: 'Update "Home-Page"\n' } });
    res = await f().request('GET', '/repos/alice/docs/wiki/revisions/Home-Page');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.commits.map((c: { message: string }) => c.message)).toEqual(['Update "Home-Page"\n', 'Add "Home Page"\n']);
    expect(res.headers.get('x-total-count')).toBe('2');

    // Without a title Gitea renames the page to "unnamed".
    res = await f().request('PATCH', '/repos/alice/docs/wiki/page/a-b.md.-', { ...as('alice'), body: { content_base64: b64('v3') } });
    expect(res.status).toBe(200);
    expect(res.body.sub_url).toBe('unnamed');
    expect((await f().request('GET', '/repos/alice/docs/wiki/page/a-b.md.-')).status).toBe(404);

    expect((await f().request('DELETE', '/repos/alice/docs/wiki/page/unnamed', as('bob'))).status).toBe(403);
    expect((await f().request('DELETE', '/repos/alice/docs/wiki/page/unnamed', as('alice'))).status).toBe(204);
    res = await f().request('DELETE', '/repos/alice/docs/wiki/page/nope', as('alice'));
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('resource does not exist');
  });

  test('git clone of <repo>.wiki.git shows API pages; a page pushed with git is read through the API', async () => {
    const dir = path.join(work, 'wiki');
    const cloned = await git(work, 'clone', remote('alice'), dir);
    expect(cloned.exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'Home-Page.md'), 'utf8')).toBe('v2');
    fs.writeFileSync(path.join(dir, 'From-Git.md'), 'pushed with git');
    await git(dir, 'add', '.');
    expect((await git(dir, 'commit', '-m', 'from git')).exitCode).toBe(0);
    const pushed = await git(dir, 'push', 'origin', 'HEAD:main');
    expect(pushed.exitCode).toBe(0);
    const res = await f().request('GET', '/repos/alice/docs/wiki/page/From-Git');
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.content_base64, 'base64').toString()).toBe('pushed with git');
    expect(res.body.last_commit.message).toBe('from git\n');

    // A reader of a public repository clones its wiki; pushing needs write on the wiki unit.
    expect((await git(work, 'clone', remote('bob'), path.join(work, 'bob-wiki'))).exitCode).toBe(0);
    const bobDir = path.join(work, 'bob-wiki');
    fs.writeFileSync(path.join(bobDir, 'Vandal.md'), 'x');
    await git(bobDir, 'add', '.');
    await git(bobDir, 'commit', '-m', 'vandal');
    expect((await git(bobDir, 'push', 'origin', 'HEAD:main')).exitCode).not.toBe(0);
    expect((await f().request('GET', '/repos/alice/docs/wiki/page/Vandal')).status).toBe(404);
  });
});
