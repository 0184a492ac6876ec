/**
 * The forge with the real git CLI over a listening server (SQLite, and PostgreSQL when
 * PG_TEST_URL is set): clone an auto_init repository, push, watch size/empty/default_branch
 * follow, and the access rules of git smart HTTP (anonymous, private, tokens).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from '../forge-api/test/support/git';
import { describeForge, PASSWORD, type Forge } from '../forge-api/test/support/forge';


function cloneUrl(f: Forge, fullName: string, cred?: [string, string]): string {
  const u = new URL(`${f.url}/${fullName}.git`);
  if (cred) {
    u.username = encodeURIComponent(cred[0]);
    u.password = encodeURIComponent(cred[1]);
  }
  return u.toString();
}

async function commitFile(dir: string, name: string, bytes: number) {
  fs.writeFileSync(path.join(dir, name), crypto.randomBytes(bytes));
  await git(dir, 'add', name);
  const r = await git(dir, 'commit', '-q', '-m', `add ${name}`);
  expect(r.exitCode).toBe(0);
}

describeForge('git over smart HTTP', (f) => {
  let work: string;
  const alice: [string, string] = ['alice', PASSWORD];
  const bob: [string, string] = ['bob', PASSWORD];

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-git-e2e-'));
    await f().user('alice');
    await f().user('bob');
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('auto_init repository: clone anonymously, push a commit, size follows', async () => {
    const created = await f().request('POST', '/user/repos', {
      basic: alice,
      body: { name: 'Demo', description: 'A demo', auto_init: true, license: 'MIT', gitignores: 'Node,Go', readme: 'Default', issue_labels: 'Default' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ empty: false, default_branch: 'main', clone_url: `${f().url}/alice/Demo.git` });
    const sizeBefore: number = created.body.size;
    expect(sizeBefore).toBeGreaterThan(0);

    const dir = path.join(work, 'demo');
    const clone = await git(work, 'clone', '-q', created.body.clone_url, dir);
    expect(clone.stderr).toBe('');
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('# Demo\n\nA demo');
    expect(fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8')).toContain(`Copyright (c) ${new Date().getUTCFullYear()} alice`);
    expect(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8')).toMatch(/^# ---> Node\n[\s\S]*# ---> Go\n/);
    expect((await git(dir, 'log', '--format=%an|%s')).stdout).toBe('alice|Initial commit');

    await commitFile(dir, 'payload.bin', 256 * 1024);
    const push = await git(dir, 'push', '-q', cloneUrl(f(), 'alice/Demo', alice), 'main');
    expect(push.stderr).toBe('');
    expect(push.exitCode).toBe(0);

    const after = await f().request('GET', '/repos/alice/Demo');
    expect(after.body.size).toBeGreaterThanOrEqual(sizeBefore + 200);
    expect(after.body.empty).toBe(false);
  });

  test('empty repository: the first push clears empty and sets default_branch', async () => {
    const created = await f().request('POST', '/user/repos', { basic: alice, body: { name: 'blank' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ empty: true, default_branch: 'main' });

    const dir = path.join(work, 'blank');
    fs.mkdirSync(dir);
    await git(dir, 'init', '-q', '-b', 'develop');
    await commitFile(dir, 'a.bin', 1000);
    const push = await git(dir, 'push', '-q', cloneUrl(f(), 'alice/blank', alice), 'develop');
    expect(push.exitCode).toBe(0);

    const after = await f().request('GET', '/repos/alice/blank');
    expect(after.body).toMatchObject({ empty: false, default_branch: 'develop' });
    expect(after.body.size).toBeGreaterThanOrEqual(created.body.size);

    const again = path.join(work, 'blank-again');
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'alice/blank'), again)).exitCode).toBe(0);
    expect((await git(again, 'rev-parse', '--abbrev-ref', 'HEAD')).stdout).toBe('develop');
  });

  test('anonymous push is refused with 401 and a Basic challenge', async () => {
    const res = await fetch(`${f().url}/alice/Demo.git/info/refs?service=git-receive-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const dir = path.join(work, 'anon');
    await git(work, 'clone', '-q', cloneUrl(f(), 'alice/Demo'), dir);
    await commitFile(dir, 'x.bin', 10);
    const push = await git(dir, 'push', 'origin', 'main');
    expect(push.exitCode).not.toBe(0);
  });

  test('a reader may start a push (AGit pushes need only read, as in Gitea) but no branch moves: pre-receive refuses it', async () => {
    const res = await fetch(`${f().url}/alice/Demo.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Basic ${Buffer.from(bob.join(':')).toString('base64')}` },
    });
    expect(res.status).toBe(200);
    const dir = path.join(work, 'bob-push');
    await git(work, 'clone', '-q', cloneUrl(f(), 'alice/Demo'), dir);
    await commitFile(dir, 'bob.bin', 10);
    const push = await git(dir, 'push', cloneUrl(f(), 'alice/Demo', bob), 'HEAD:main');
    expect(push.exitCode).not.toBe(0);
    expect(push.stderr).toContain('User permission denied for writing.');
  });

  test('private repositories: 401 for anonymous, 404 for others, clone for the owner', async () => {
    const created = await f().request('POST', '/user/repos', { basic: alice, body: { name: 'secret', private: true, auto_init: true } });
    expect(created.status).toBe(201);

    const anon = await fetch(`${f().url}/alice/secret.git/info/refs?service=git-upload-pack`);
    expect(anon.status).toBe(401);
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'alice/secret'), path.join(work, 's-anon'))).exitCode).not.toBe(0);

    const asBob = await fetch(`${f().url}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(bob.join(':')).toString('base64')}` },
    });
    expect(asBob.status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret', { basic: bob })).status).toBe(404);

    const dir = path.join(work, 's-owner');
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'alice/secret', alice), dir)).exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('# secret\n\n');
  });

  test('tokens: write:repository pushes, read:repository clones but cannot push, other scopes are refused', async () => {
    const write = await f().token('alice', ['write:repository']);
    const read = await f().token('alice', ['read:repository']);
    const other = await f().token('alice', ['read:user']);

    const dir = path.join(work, 'tok');
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'alice/secret', ['alice', read]), dir)).exitCode).toBe(0);
    await commitFile(dir, 't.bin', 2048);
    const denied = await git(dir, 'push', cloneUrl(f(), 'alice/secret', ['alice', read]), 'main');
    expect(denied.exitCode).not.toBe(0);
    expect(denied.stderr).toMatch(/403/);

    const ok = await git(dir, 'push', '-q', cloneUrl(f(), 'alice/secret', ['alice', write]), 'main');
    expect(ok.exitCode).toBe(0);
    const head = (await git(dir, 'rev-parse', 'HEAD')).stdout;
    const remote = await git(work, 'ls-remote', cloneUrl(f(), 'alice/secret', ['alice', write]), 'refs/heads/main');
    expect(remote.stdout.split('\t')[0]).toBe(head);

    const refused = await fetch(`${f().url}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`alice:${other}`).toString('base64')}` },
    });
    expect(refused.status).toBe(403);
  });

  test('a push larger than the API body limit streams through', async () => {
    const created = await f().request('POST', '/user/repos', { basic: alice, body: { name: 'big', auto_init: true } });
    expect(created.status).toBe(201);
    const dir = path.join(work, 'big');
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'alice/big'), dir)).exitCode).toBe(0);
    await commitFile(dir, 'large.bin', 34 * 1024 * 1024); // the API accepts 32 MiB bodies
    const push = await git(dir, 'push', '-q', cloneUrl(f(), 'alice/big', alice), 'main');
    expect(push.exitCode).toBe(0);
    const after = await f().request('GET', '/repos/alice/big');
    expect(after.body.size).toBeGreaterThan(34 * 1024);
    const again = path.join(work, 'big-again');
    const cloned = await git(work, 'clone', '-q', cloneUrl(f(), 'alice/big'), again);
    expect({ exitCode: cloned.exitCode, stderr: cloned.stderr }).toEqual({ exitCode: 0, stderr: '' });
    expect(fs.statSync(path.join(again, 'large.bin')).size).toBe(34 * 1024 * 1024);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(again, { recursive: true, force: true });
  });

  test('two-factor users cannot use their password over git, but can use a token', async () => {
    await f().user('carol');
    const carol: [string, string] = ['carol', PASSWORD];
    const token = await f().token('carol', ['write:repository']);
    expect((await f().request('POST', '/user/repos', { basic: carol, body: { name: 'c2fa', private: true, auto_init: true } })).status).toBe(201);
    await f().app.prisma.user.update({ where: { lowerName: 'carol' }, data: { totpSecret: 'JBSWY3DPEHPK3PXP' } });

    const res = await fetch(`${f().url}/carol/c2fa.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(carol.join(':')).toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toMatch(/two-factor authentication enabled cannot perform HTTP\/HTTPS operations via plain username and password/);
    const dir = path.join(work, 'c2fa');
    expect((await git(work, 'clone', '-q', cloneUrl(f(), 'carol/c2fa', ['carol', token]), dir)).exitCode).toBe(0);
  });

  test('prohibited accounts get 403, and so do repositories of inactive owners', async () => {
    await f().user('dave');
    const dave: [string, string] = ['dave', PASSWORD];
    expect((await f().request('POST', '/user/repos', { basic: dave, body: { name: 'd', auto_init: true } })).status).toBe(201);
    await f().app.prisma.user.update({ where: { lowerName: 'dave' }, data: { prohibitLogin: true } });
    const asDave = await fetch(`${f().url}/alice/Demo.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Basic ${Buffer.from(dave.join(':')).toString('base64')}` },
    });
    expect(asDave.status).toBe(403);
    await f().app.prisma.user.update({ where: { lowerName: 'dave' }, data: { prohibitLogin: false, isActive: false } });
    const inactiveOwner = await fetch(`${f().url}/dave/d.git/info/refs?service=git-upload-pack`);
    expect(inactiveOwner.status).toBe(403);
  });

  test('markdown, templates and nodeinfo through the full app', async () => {
    const md = await f().request('POST', '/markdown', { basic: alice, body: { Mode: 'comment', Context: '/alice/Demo', Text: 'see #1, cc @bob @nobody' } });
    expect(md.status).toBe(200);
    expect(md.text).toBe(
      `<p>see <a href="${f().url}/alice/Demo/issues/1" class="ref-issue" rel="nofollow">#1</a>, cc <a href="${f().url}/bob" class="mention" rel="nofollow">@bob</a> @nobody</p>\n`,
    );
    expect((await f().request('POST', '/markdown', { body: { Text: 'x' } })).status).toBe(401);
    const raw = await f().request('POST', '/markdown/raw', { basic: alice, raw: '*hi*', contentType: 'text/plain' });
    expect(raw.text).toBe('<p><em>hi</em></p>\n');
    expect((await f().request('GET', '/label/templates')).body).toEqual(['Advanced', 'Default']);
    expect((await f().request('GET', '/licenses/NOPE')).status).toBe(404);
    const node = await f().request('GET', '/nodeinfo');
    expect(node.status).toBe(200);
    expect(node.body.usage.users.total).toBeGreaterThanOrEqual(2);
  });
});
