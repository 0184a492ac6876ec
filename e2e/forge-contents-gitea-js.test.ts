/**
 * Gitea's own JS client (gitea-js) writing and reading files through the contents API, and the
 * real git CLI seeing the effects: a commit made through the API is cloneable, a push on top of
 * it is read back through the API, archives download through the client.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { git } from '../forge-api/test/support/git';
import { describeForge } from '../forge-api/test/support/forge';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describeForge('gitea-js: repository contents over the API and git', (f) => {
  let token: string;
  let api: ReturnType<typeof giteaApi>;
  let work: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-contents-js-'));
    await f().user('cora');
    token = await f().token('cora', ['write:repository', 'write:user']);
    api = giteaApi(f().url, { token });
    expect((await api.user.createCurrentUserRepo({ name: 'site', auto_init: true })).status).toBe(201);
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('create, update, change several, diffpatch and delete through the client; git clones every commit', async () => {
    const created = await api.repos.repoCreateFile('cora', 'site', 'docs/index.md', { content: b64('# Site\n'), message: 'docs: index', author: { name: 'Cora', email: 'cora@example.com' } });
    expect(created.status).toBe(201);
    const sha = created.data.content!.sha!;
    const updated = await api.repos.repoUpdateFile('cora', 'site', 'docs/index.md', { content: b64('# Site v2\n'), sha, message: 'docs: v2' });
    expect(updated.status).toBe(200);
    await expect(api.repos.repoUpdateFile('cora', 'site', 'docs/index.md', { content: b64('stale'), sha, message: 'lost' })).rejects.toMatchObject({ status: 422 });
    const many = await api.repos.repoChangeFiles('cora', 'site', {
      files: [
        { operation: 'create', path: 'src/app.js', content: b64('console.log(1)\n') },
        { operation: 'create', path: 'src/util.js', content: b64('module.exports = {}\n') },
      ],
      message: 'src',
    });
    expect(many.status).toBe(201);
    expect(many.data.files).toHaveLength(2);
    const patched = await api.repos.repoApplyDiffPatch('cora', 'site', {
      content: 'diff --git a/src/app.js b/src/app.js\n--- a/src/app.js\n+++ b/src/app.js\n@@ -1 +1 @@\n-console.log(1)\n+console.log(2)\n',
      message: 'patch',
    } as never);
    expect(patched.status).toBe(201);
    const util = await api.repos.repoGetContents('cora', 'site', 'src/util.js');
    const deleted = await api.repos.repoDeleteFile('cora', 'site', 'src/util.js', { sha: (util.data as { sha: string }).sha, message: 'rm util' });
    expect(deleted.status).toBe(200);

    const u = new URL(`${f().url}/cora/site.git`);
    u.username = 'cora';
    u.password = token;
    const dir = path.join(work, 'site');
    expect((await git(work, 'clone', '-q', u.toString(), dir)).exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'docs/index.md'), 'utf8')).toBe('# Site v2\n');
    expect(fs.readFileSync(path.join(dir, 'src/app.js'), 'utf8')).toBe('console.log(2)\n');
    expect(fs.existsSync(path.join(dir, 'src/util.js'))).toBe(false);
    const log = (await git(dir, 'log', '--format=%s|%an')).stdout.split('\n');
    expect(log.slice(0, 5)).toEqual(['rm util|cora', 'patch|cora', 'src|cora', 'docs: v2|cora', 'docs: index|Cora']);
    expect((await git(dir, 'rev-parse', 'HEAD')).stdout.trim()).toBe(deleted.data.commit!.sha);
    expect((await git(dir, 'fsck', '--strict')).exitCode).toBe(0);

    // A push on top of the API's commits is what the API reads next.
    fs.writeFileSync(path.join(dir, 'pushed.txt'), 'from git\n');
    await git(dir, 'add', 'pushed.txt');
    await git(dir, 'commit', '-q', '-m', 'pushed');
    expect((await git(dir, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
    const list = await api.repos.repoGetContentsList('cora', 'site');
    expect((list.data as { name: string }[]).map((e) => e.name)).toEqual(['README.md', 'docs', 'pushed.txt', 'src']);
    const raw = await api.repos.repoGetRawFile('cora', 'site', 'pushed.txt', undefined, { format: 'text' } as never);
    expect(raw.data).toBe('from git\n');
  });

  test('archives download through the client', async () => {
    const res = await api.repos.repoGetArchive('cora', 'site', 'main.zip', { format: 'arrayBuffer' } as never);
    expect(res.status).toBe(200);
    const body = Buffer.from(res.data as unknown as ArrayBuffer);
    expect(body.subarray(0, 2).toString()).toBe('PK');
  });
});
