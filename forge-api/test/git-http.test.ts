/**
 * The git smart-HTTP plugin on a minimal Fastify server with small stand-ins for the auth,
 * repository and permission services, driven by the real git CLI over a listening socket.
 */
import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import zlib from 'zlib';
import { git } from './support/git';
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import gitHttpRoutes, { GitHttpAuth, GitHttpDeps, GitHttpRepo, GitHttpUser } from '../src/routes/git-http';
import { initRepository, repositoryPath, repoStats } from '../src/services/git';

interface Shim {
  users: Record<string, { user: GitHttpUser; password: string }>;
  tokens: Record<string, { user: string; scopes: string[] }>;
  repos: GitHttpRepo[];
  writers: Record<number, string[]>;
  readers: Record<number, string[]>;
  pushes: number[];
}

let tmp: string;
let reposDir: string;
let app: FastifyInstance;
let base: string;
let shim: Shim;

function authenticate(request: FastifyRequest): Promise<GitHttpAuth> {
  const h = request.headers.authorization;
  if (!h) return Promise.resolve({ user: null, tokenScopes: null });
  const m = /^Basic (.+)$/i.exec(h);
  if (!m) return Promise.resolve({ user: null, tokenScopes: null, error: 'unsupported' });
  const [name, password] = Buffer.from(m[1], 'base64').toString().split(':');
  const token = shim.tokens[password];
  if (token) return Promise.resolve({ user: shim.users[token.user].user, tokenScopes: token.scopes });
  const u = shim.users[name];
  if (u && u.password === password) return Promise.resolve({ user: u.user, tokenScopes: null });
  return Promise.resolve({ user: null, tokenScopes: null, error: 'invalid username, password or token' });
}


const url = (cred: string | null, owner: string, repo: string) => {
  const u = new URL(`${base}/${owner}/${repo}.git`);
  if (cred) {
    const [user, pass] = cred.split(':');
    u.username = user;
    u.password = pass;
  }
  return u.toString();
};

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-git-http-'));
  reposDir = path.join(tmp, 'repositories');
  shim = {
    users: {
      alice: { user: { id: 1, name: 'alice' }, password: 'alice-pw' },
      bob: { user: { id: 2, name: 'bob' }, password: 'bob-pw' },
    },
    tokens: {
      'tok-write': { user: 'alice', scopes: ['write:repository'] },
      'tok-read': { user: 'alice', scopes: ['read:repository', 'write:issue'] },
    },
    repos: [
      { id: 1, ownerName: 'alice', name: 'Public', isPrivate: false },
      { id: 2, ownerName: 'alice', name: 'secret', isPrivate: true },
      { id: 3, ownerName: 'alice', name: 'empty', isPrivate: false },
    ],
    writers: { 1: ['alice'], 2: ['alice'], 3: ['alice'] },
    readers: { 1: ['alice', 'bob'], 2: ['alice'], 3: ['alice', 'bob'] },
    pushes: [],
  };
  const author = { name: 'Alice', email: 'alice@example.com' };
  await initRepository(repositoryPath(reposDir, 'alice', 'Public'), { defaultBranch: 'main', autoInit: { readme: { name: 'Public', description: 'hello' }, author } });
  await initRepository(repositoryPath(reposDir, 'alice', 'secret'), { defaultBranch: 'main', autoInit: { readme: { name: 'secret' }, author } });
  await initRepository(repositoryPath(reposDir, 'alice', 'empty'), { defaultBranch: 'main' });

  app = Fastify();
  const deps: Partial<GitHttpDeps> = {
      reposDir,
      authenticate,
      findRepo: async (owner, name) =>
        shim.repos.find((r) => r.ownerName.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === name.toLowerCase()) ?? null,
      access: async (user, repo) => ({
        read: !repo.isPrivate || (user !== null && shim.readers[repo.id].includes(user.name)),
        write: user !== null && shim.writers[repo.id].includes(user.name),
      }),
      afterPush: async (repo) => {
        shim.pushes.push(repo.id);
      },
  };
  await app.register(gitHttpRoutes, { deps });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

afterAll(async () => {
  await app?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('clone and fetch', () => {
  it('clones a public auto_init repository anonymously', async () => {
    const dir = path.join(tmp, 'clone-public');
    const r = await git(tmp, 'clone', '-q', url(null, 'alice', 'Public'), dir);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# Public\n\nhello');
    expect((await git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).stdout).toBe('main');
  });

  it('works without the .git suffix and with protocol v0 as well as v2', async () => {
    const dir = path.join(tmp, 'clone-v0');
    const r = await git(tmp, '-c', 'protocol.version=0', 'clone', '-q', `${base}/alice/public`, dir);
    expect(r.exitCode).toBe(0);
    expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toContain('# Public');
  });

  it('answers info/refs with the smart-HTTP advertisement and no-cache headers', async () => {
    const res = await fetch(`${base}/alice/Public.git/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect(res.headers.get('cache-control')).toBe('no-cache, max-age=0, must-revalidate');
    const body = await res.text();
    expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
    expect(body).toContain('refs/heads/main');
    expect((await fetch(`${base}/alice/Public.git/info/refs`)).status).toBe(403);
  });

  it('inflates gzip request bodies', async () => {
    const refs = await (await fetch(`${base}/alice/Public.git/info/refs?service=git-upload-pack`, { headers: { 'git-protocol': 'version=1' } })).text();
    const sha = /([0-9a-f]{40}) refs\/heads\/main/.exec(refs)![1];
    const request = `0032want ${sha}\n00000009done\n`;
    const res = await fetch(`${base}/alice/Public.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(request),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const out = Buffer.from(await res.arrayBuffer());
    expect(out.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(out.includes(Buffer.from('PACK'))).toBe(true);
  });

  it('answers a wrong Content-Type with 401 as Gitea does', async () => {
    const res = await fetch(`${base}/alice/Public.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(res.status).toBe(401);
  });
});

describe('private repositories', () => {
  it('asks anonymous callers for credentials', async () => {
    const res = await fetch(`${base}/alice/secret.git/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitea"');
    const r = await git(tmp, 'clone', '-q', url(null, 'alice', 'secret'), path.join(tmp, 'anon-secret'));
    expect(r.exitCode).not.toBe(0);
  });

  it('hides them (404) from signed-in users without access, and from anyone when missing', async () => {
    const auth = 'Basic ' + Buffer.from('bob:bob-pw').toString('base64');
    const res = await fetch(`${base}/alice/secret.git/info/refs?service=git-upload-pack`, { headers: { authorization: auth } });
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('Repository not found');
    const missing = await fetch(`${base}/alice/nope.git/info/refs?service=git-upload-pack`, { headers: { authorization: auth } });
    expect(missing.status).toBe(404);
    // anonymous callers cannot tell a missing repository from a private one
    expect((await fetch(`${base}/alice/nope.git/info/refs?service=git-upload-pack`)).status).toBe(401);
  });

  it('lets the owner clone with a password', async () => {
    const dir = path.join(tmp, 'owner-secret');
    const r = await git(tmp, 'clone', '-q', url('alice:alice-pw', 'alice', 'secret'), dir);
    expect(r.exitCode).toBe(0);
    expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toContain('# secret');
  });

  it('rejects wrong credentials with 401', async () => {
    const res = await fetch(`${base}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: 'Basic ' + Buffer.from('alice:wrong').toString('base64') },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Basic');
  });
});

describe('push', () => {
  async function commitIn(dir: string, file: string, bytes: number) {
    await fs.writeFile(path.join(dir, file), (await import('crypto')).randomBytes(bytes));
    await git(dir, 'add', file);
    const c = await git(dir, 'commit', '-q', '-m', `add ${file}`);
    expect(c.exitCode).toBe(0);
  }

  it('refuses anonymous pushes with 401', async () => {
    const res = await fetch(`${base}/alice/Public.git/info/refs?service=git-receive-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitea"');
    const dir = path.join(tmp, 'anon-push');
    await git(tmp, 'clone', '-q', url(null, 'alice', 'Public'), dir);
    await commitIn(dir, 'anon.bin', 10);
    const r = await git(dir, 'push', 'origin', 'main');
    expect(r.exitCode).not.toBe(0);
  });

  it('pushes with basic auth into an empty repository; size, empty flag and default branch follow', async () => {
    const repoPath = repositoryPath(reposDir, 'alice', 'empty');
    const before = await repoStats(repoPath);
    expect(before.empty).toBe(true);

    const dir = path.join(tmp, 'push-empty');
    const c = await git(tmp, 'clone', '-q', url('alice:alice-pw', 'alice', 'empty'), dir);
    expect(c.exitCode).toBe(0);
    await git(dir, 'checkout', '-q', '-b', 'trunk');
    await commitIn(dir, 'data.bin', 300 * 1024);
    const pushesBefore = shim.pushes.length;
    const r = await git(dir, 'push', '-q', 'origin', 'trunk');
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(shim.pushes.slice(pushesBefore)).toEqual([3]);

    const after = await repoStats(repoPath);
    expect(after.empty).toBe(false);
    expect(after.defaultBranch).toBe('trunk');
    expect(after.sizeKiB).toBeGreaterThan(before.sizeKiB + 250);

    const again = path.join(tmp, 'reclone-empty');
    expect((await git(tmp, 'clone', '-q', url(null, 'alice', 'empty'), again)).exitCode).toBe(0);
    expect((await fs.stat(path.join(again, 'data.bin'))).size).toBe(300 * 1024);
  });

  it('refuses a signed-in user without write access (404) and a read-only token (403)', async () => {
    const dir = path.join(tmp, 'bob-push');
    await git(tmp, 'clone', '-q', url(null, 'alice', 'Public'), dir);
    await commitIn(dir, 'bob.bin', 10);
    const bob = await git(dir, 'push', url('bob:bob-pw', 'alice', 'Public'), 'main');
    expect(bob.exitCode).not.toBe(0);
    expect(bob.stderr).toMatch(/not found|404/i);

    const res = await fetch(`${base}/alice/Public.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: 'Basic ' + Buffer.from('alice:tok-read').toString('base64') },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe('User permission denied');
  });

  it('pushes with a write:repository token as the password', async () => {
    const dir = path.join(tmp, 'token-push');
    await git(tmp, 'clone', '-q', url(null, 'alice', 'Public'), dir);
    await commitIn(dir, 'token.bin', 1000);
    const r = await git(dir, 'push', '-q', url('alice:tok-write', 'alice', 'Public'), 'main');
    expect(r.exitCode).toBe(0);
    const log = await git(repositoryPath(reposDir, 'alice', 'Public'), 'log', '-1', '--format=%s', 'main');
    expect(log.stdout).toBe('add token.bin');
  });
});
