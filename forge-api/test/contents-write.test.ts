/**
 * Writing files through the API: every write is a real commit (checked with the real git CLI on
 * a clone), with Gitea 1.27.3's statuses and messages for the rule breaks, permissions, push
 * webhooks like a git push, and N concurrent writers to one branch where every 2xx answer's
 * commit is in the history and every loser got 409/422.
 */
import { promises as fs } from 'fs';
import http from 'http';
import os from 'os';
import path from 'path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

const b64 = (s: string) => Buffer.from(s).toString('base64');

async function must(cwd: string, ...args: string[]) {
  const r = await git(cwd, ...args);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describeForge('contents (writes)', (f) => {
  const alice = { basic: ['alice', PASSWORD] as [string, string] };
  const bob = { basic: ['bob', PASSWORD] as [string, string] };
  let tmp: string;
  const hooks: { event: string; body: any }[] = [];
  let receiver: http.Server;

  const clone = async (repo: string) => {
    const dir = await fs.mkdtemp(path.join(tmp, 'clone-'));
    const u = new URL(`${f().url}/alice/${repo}.git`);
    u.username = 'alice';
    u.password = PASSWORD;
    await must(dir, 'clone', '-q', u.toString(), '.');
    return dir;
  };

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'contents-write-'));
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...alice, body: { name: 'w', auto_init: true } })).status).toBe(201);
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        hooks.push({ event: String(req.headers['x-gitea-event']), body: JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const port = (receiver.address() as { port: number }).port;
    const hook = await f().request('POST', '/repos/alice/w/hooks', {
      ...alice,
      body: { type: 'gitea', active: true, events: ['push', 'create'], config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' } },
    });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => {
    receiver?.close();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it('creates a file (201) as a real commit with Gitea FileResponse, sign-off, author and dates', async () => {
    const res = await f().request('POST', '/repos/alice/w/contents/docs/new.md', {
      ...alice,
      body: { content: b64('new\n'), signoff: true, author: { name: 'Ann', email: 'ann@example.com' }, dates: { author: '2025-01-02T03:04:05+02:00' } },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['content', 'commit', 'verification']);
    expect(res.body.content).toMatchObject({ name: 'new.md', path: 'docs/new.md', type: 'file', encoding: 'base64', content: b64('new\n') });
    expect(res.body.content.last_commit_sha).toBe(res.body.commit.sha);
    expect(Object.keys(res.body.commit)).toEqual(['url', 'sha', 'created', 'html_url', 'author', 'committer', 'parents', 'message', 'tree']);
    expect(res.body.commit.message).toBe('Add docs/new.md\n\nSigned-off-by: Ann <ann@example.com>');
    expect(res.body.commit.author).toEqual({ name: 'Ann', email: 'ann@example.com', date: '2025-01-02T01:04:05Z' });
    expect(res.body.commit.committer.name).toBe('Ann');
    expect(res.body.verification).toEqual({ verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' });
    const dir = await clone('w');
    expect(await fs.readFile(path.join(dir, 'docs/new.md'), 'utf8')).toBe('new\n');
    expect((await must(dir, 'rev-parse', 'HEAD')).trim()).toBe(res.body.commit.sha);
    expect((await must(dir, 'log', '-1', '--format=%an <%ae> %aI')).trim()).toBe('Ann <ann@example.com> 2025-01-02T03:04:05+02:00');
    expect((await git(dir, 'fsck', '--strict')).exitCode).toBe(0);
  });

  it('updates with a sha (200), creates without one (201), refuses a wrong sha (422)', async () => {
    const cur = await f().request('GET', '/repos/alice/w/contents/docs/new.md');
    const up = await f().request('PUT', '/repos/alice/w/contents/docs/new.md', { ...alice, body: { content: b64('v2'), sha: cur.body.sha, message: 'second' } });
    expect(up.status).toBe(200);
    expect(up.body.commit.message).toBe('second\n');
    expect(up.body.commit.parents[0].sha).toBe(cur.body.last_commit_sha);
    const stale = await f().request('PUT', '/repos/alice/w/contents/docs/new.md', { ...alice, body: { content: b64('v3'), sha: cur.body.sha } });
    expect(stale.status).toBe(422);
    expect(stale.body.message).toBe(`sha does not match [given: ${cur.body.sha}, expected: ${up.body.content.sha}]`);
    const created = await f().request('PUT', '/repos/alice/w/contents/other.txt', { ...alice, body: { content: b64('o') } });
    expect(created.status).toBe(201);
    expect(created.body.commit.message).toBe('Add other.txt\n');
    const again = await f().request('POST', '/repos/alice/w/contents/other.txt', { ...alice, body: { content: b64('o') } });
    expect(again.status).toBe(422);
    expect(again.body.message).toBe('repository file already exists [path: other.txt]');
  });

  it('answers Gitea errors for bad writes without moving the branch', async () => {
    const before = (await f().request('GET', '/repos/alice/w/contents/README.md')).body.last_commit_sha;
    const cases: [string, string, unknown, number, string?][] = [
      ['POST', '/repos/alice/w/contents/README.md/x', { content: b64('x') }, 422, 'a file exists where you’re trying to create a subdirectory [path: README.md]'],
      ['POST', '/repos/alice/w/contents/docs', { content: b64('x') }, 422, 'a directory exists where you’re trying to create a file [path: docs]'],
      ['POST', '/repos/alice/w/contents/x', { content: b64('x'), branch: 'nope' }, 404],
      ['POST', '/repos/alice/w/contents/y', { content: '%%%' }, 422, 'illegal base64 data at input byte 0'],
      ['DELETE', '/repos/alice/w/contents/README.md', {}, 422, '[SHA]: Required'],
      ['DELETE', '/repos/alice/w/contents/nope.txt', { sha: '0'.repeat(40) }, 404, 'object does not exist [id: , rel_path: nope.txt]'],
      ['POST', '/repos/alice/w/contents/.git%2Fhooks%2Fpost-update', { content: b64('#!/bin/sh\ntouch /tmp/pwned\n') }, 422, 'path contains a malformed path component [path: .git/hooks/post-update]'],
      ['POST', '/repos/alice/w/contents/a%2F..%2F..%2Fescape', { content: b64('x') }, 422],
      ['POST', '/repos/alice/w/contents', { files: [{ operation: 'explode', path: 'z' }] }, 422],
      ['POST', '/repos/alice/w/contents', { files: [{ operation: 'create', path: '/abs' }] }, 422],
      ['POST', '/repos/alice/w/diffpatch', { content: 'garbage' }, 422],
    ];
    for (const [method, p, body, status, message] of cases) {
      const res = await f().request(method, p, { ...alice, body });
      expect([p, res.status]).toEqual([p, status]);
      if (message) expect(res.body.message).toBe(message);
    }
    expect((await f().request('GET', '/repos/alice/w/contents/README.md')).body.last_commit_sha).toBe(before);
    await expect(fs.stat(path.join(f().dataDir, 'repositories', 'alice', 'w.git', 'hooks', 'post-update'))).rejects.toThrow();
  });

  it('needs a signed-in writer: 401 anonymous, 403 reader/stranger, 423 archived', async () => {
    expect((await f().request('POST', '/repos/alice/w/contents/p', { body: { content: b64('x') } })).status).toBe(401);
    const res = await f().request('POST', '/repos/alice/w/contents/p', { ...bob, body: { content: b64('x') } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should have a permission to write to the target branch');
    expect((await f().request('POST', '/user/repos', { ...alice, body: { name: 'arch', auto_init: true } })).status).toBe(201);
    const patched = await f().request('PATCH', '/repos/alice/arch', { ...alice, body: { archived: true } });
    if (patched.status === 200) {
      const arch = await f().request('POST', '/repos/alice/arch/contents/p', { ...alice, body: { content: b64('x') } });
      expect(arch.status).toBe(423);
    }
  });

  it('changes several files in one commit (POST /contents) and renames', async () => {
    const readme = (await f().request('GET', '/repos/alice/w/contents/README.md')).body;
    const res = await f().request('POST', '/repos/alice/w/contents', {
      ...alice,
      body: {
        files: [
          { operation: 'create', path: 'multi/a.txt', content: b64('A') },
          { operation: 'update', path: 'README.md', content: b64('# w2\n'), sha: readme.sha },
          { operation: 'rename', path: 'moved.txt', from_path: 'other.txt' },
          { operation: 'delete', path: 'docs/new.md' },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['files', 'commit', 'verification']);
    expect(res.body.files.map((x: any) => x && x.path)).toEqual(['multi/a.txt', 'README.md', 'moved.txt', null]);
    expect(res.body.commit.message).toBe('Add multi/a.txt\nUpdate README.md, moved.txt\nDelete docs/new.md\n');
    const dir = await clone('w');
    expect((await must(dir, 'ls-tree', '-r', '--name-only', 'HEAD')).trim().split('\n').sort()).toEqual(['README.md', 'moved.txt', 'multi/a.txt']);
    expect(await fs.readFile(path.join(dir, 'moved.txt'), 'utf8')).toBe('o');
    expect((await must(dir, 'rev-list', '--count', 'HEAD', '^HEAD~1')).trim()).toBe('1');
  });

  it('commits to a new branch and refuses an existing one', async () => {
    const res = await f().request('POST', '/repos/alice/w/contents/feature.txt', { ...alice, body: { content: b64('f'), new_branch: 'feature/x' } });
    expect(res.status).toBe(201);
    expect(res.body.content.url).toContain('?ref=feature%2Fx');
    expect(res.body.content.html_url).toContain('/src/branch/feature/x/feature.txt');
    const again = await f().request('POST', '/repos/alice/w/contents/feature2.txt', { ...alice, body: { content: b64('f'), new_branch: 'feature/x' } });
    expect(again.status).toBe(422);
    expect(again.body.message).toBe('branch already exists [name: feature/x]');
    const onIt = await f().request('GET', '/repos/alice/w/contents/feature.txt?ref=feature/x');
    expect(onIt.status).toBe(200);
    expect((await f().request('GET', '/repos/alice/w/contents/feature.txt')).status).toBe(404);
  });

  it('applies a unified diff as one commit (POST /diffpatch, 201)', async () => {
    const patch = 'diff --git a/multi/a.txt b/multi/a.txt\n--- a/multi/a.txt\n+++ b/multi/a.txt\n@@ -1 +1 @@\n-A\n\\ No newline at end of file\n+B\n';
    const res = await f().request('POST', '/repos/alice/w/diffpatch', { ...alice, body: { content: patch, message: 'patch it' } });
    expect(res.status).toBe(201);
    expect(res.body.content).toBeNull();
    expect(res.body.commit.message).toBe('patch it\n');
    const file = await f().request('GET', '/repos/alice/w/contents/multi/a.txt');
    expect(Buffer.from(file.body.content, 'base64').toString()).toBe('B\n');
  });

  it('deletes with a sha (200, content null) and fires push webhooks like a git push', async () => {
    const cur = (await f().request('GET', '/repos/alice/w/contents/moved.txt')).body;
    hooks.length = 0;
    const res = await f().request('DELETE', '/repos/alice/w/contents/moved.txt', { ...alice, body: { sha: cur.sha } });
    expect(res.status).toBe(200);
    expect(res.body.content).toBeNull();
    expect(res.body.commit.message).toBe('Delete moved.txt\n');
    const deadline = Date.now() + 15000;
    while (!hooks.some((h) => h.event === 'push' && h.body.after === res.body.commit.sha) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const push = hooks.find((h) => h.event === 'push' && h.body.after === res.body.commit.sha);
    expect(push).toBeTruthy();
    expect(push!.body.ref).toBe('refs/heads/main');
    expect(push!.body.commits[0].id).toBe(res.body.commit.sha);
    expect(push!.body.commits[0].removed).toEqual(['moved.txt']);
    expect(push!.body.pusher.login).toBe('alice');
  });

  it('N concurrent updates of one branch: every 2xx commit is in the history, losers got 409/422', async () => {
    const base = (await f().request('PUT', '/repos/alice/w/contents/counter.txt', { ...alice, body: { content: b64('0') } })).body.content.sha;
    const N = 6;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        f().request('POST', '/repos/alice/w/contents', {
          ...alice,
          body: {
            message: `writer ${i}`,
            files: [
              { operation: 'update', path: 'counter.txt', content: b64(String(i + 1)), sha: base },
              { operation: 'create', path: `w/${i}.txt`, content: b64(String(i)) },
            ],
          },
        }),
      ),
    );
    // Writers without a sha check never conflict: they all land, one after the other.
    const free = await Promise.all(Array.from({ length: N }, (_, i) => f().request('POST', `/repos/alice/w/contents/free/${i}.txt`, { ...alice, body: { content: b64(String(i)) } })));
    const won = results.filter((r) => r.status === 201);
    const lost = results.filter((r) => r.status !== 201);
    expect(won.length).toBe(1);
    for (const r of lost) expect([409, 422]).toContain(r.status);
    for (const r of free) expect(r.status).toBe(201);
    const dir = await clone('w');
    const history = new Set((await must(dir, 'rev-list', 'HEAD')).trim().split('\n'));
    for (const r of [...won, ...free]) expect(history.has(r.body.commit.sha)).toBe(true);
    expect((await must(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'free')).trim().split('\n')).toHaveLength(N);
    expect((await must(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'w')).trim().split('\n')).toHaveLength(1);
  });
}, { webhookAllowedHostList: 'loopback' });
