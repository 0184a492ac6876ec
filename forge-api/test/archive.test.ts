/**
 * GET /archive/{ref}.zip|.tar.gz|.bundle: streamed archives unpacked with the real unzip, tar
 * and git, with Gitea 1.27.3's headers, names and errors.
 */
import { promises as fs } from 'fs';
import os from 'os';
import path from 'path';
import execa from 'execa';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('archives', (f) => {
  let tmp: string;
  let head: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'archive-test-'));
    await f().user('alice');
    expect((await f().request('POST', '/user/repos', { basic: ['alice', PASSWORD], body: { name: 'arc', auto_init: true } })).status).toBe(201);
    const put = await f().request('POST', '/repos/alice/arc/contents', {
      basic: ['alice', PASSWORD],
      body: { files: [{ operation: 'create', path: 'src/main.c', content: Buffer.from('int main(){}\n').toString('base64') }, { operation: 'create', path: 'big.bin', content: Buffer.alloc(3_000_000, 'z').toString('base64') }] },
    });
    expect(put.status).toBe(201);
    head = put.body.commit.sha;
  });
  afterAll(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  const download = async (name: string) => {
    const res = await fetch(`${f().api}/repos/alice/arc/archive/${name}`);
    const body = Buffer.from(await res.arrayBuffer());
    const file = path.join(tmp, `${Date.now()}-${name.replace(/\//g, '_')}`);
    await fs.writeFile(file, body);
    return { res, file, body };
  };

  it('zip: Gitea headers, unpacks with unzip into <repo>/', async () => {
    const { res, file } = await download('main.zip');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=arc-main.zip');
    expect(res.headers.get('link')).toBe(`<${f().api}/repos/alice/arc/archive/${head}.zip?rev=${head}>; rel="immutable"`);
    const out = path.join(tmp, 'unzip');
    await execa('unzip', ['-q', file, '-d', out]);
    expect(await fs.readFile(path.join(out, 'arc', 'src', 'main.c'), 'utf8')).toBe('int main(){}\n');
    expect((await fs.stat(path.join(out, 'arc', 'big.bin'))).size).toBe(3_000_000);
    expect(await fs.readFile(path.join(out, 'arc', 'README.md'), 'utf8')).toContain('arc');
  });

  it('tar.gz of a commit id and of a short id, unpacked with tar', async () => {
    for (const ref of [head, head.slice(0, 8)]) {
      const { res, file } = await download(`${ref}.tar.gz`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename=arc-${ref}.tar.gz`);
      const out = path.join(tmp, `tar-${ref}`);
      await fs.mkdir(out);
      await execa('tar', ['-xzf', file, '-C', out]);
      expect(await fs.readFile(path.join(out, 'arc', 'src', 'main.c'), 'utf8')).toBe('int main(){}\n');
    }
  });

  it('bundle: clonable with git, one branch named bundle', async () => {
    const { res, file } = await download('main.bundle');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=arc-main.bundle');
    const heads = await git(tmp, 'bundle', 'list-heads', file);
    expect(heads.stdout).toContain(`${head} refs/heads/bundle`);
    const out = path.join(tmp, 'from-bundle');
    const cloned = await git(tmp, 'clone', '-q', file, out);
    expect(cloned.exitCode).toBe(0);
    expect(await fs.readFile(path.join(out, 'src', 'main.c'), 'utf8')).toBe('int main(){}\n');
  });

  it('path= limits the archive to those paths (not for bundles)', async () => {
    const { res, file } = await download('main.tar.gz?path=src');
    expect(res.status).toBe(200);
    const list = (await execa('tar', ['-tzf', file])).stdout.split('\n');
    expect(list).toContain('arc/src/main.c');
    expect(list).not.toContain('arc/README.md');
    expect((await f().request('GET', '/repos/alice/arc/archive/main.bundle?path=src')).status).toBe(400);
    expect((await f().request('GET', '/repos/alice/arc/archive/main.zip?path=nope')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/arc/archive/main.zip?path=..%2F..%2Fetc')).status).toBe(400);
  });

  it('unknown refs are 404, unknown formats 400, private repositories 404 for strangers', async () => {
    const nope = await f().request('GET', '/repos/alice/arc/archive/nope.zip');
    expect(nope.status).toBe(404);
    expect(nope.body.message).toBe('unrecognized repository reference: nope');
    const rar = await f().request('GET', '/repos/alice/arc/archive/main.rar');
    expect(rar.status).toBe(400);
    expect(rar.body.message).toBe('unknown format: main.rar');
    const evil = await f().request('GET', '/repos/alice/arc/archive/--output=%2Ftmp%2Fx.zip');
    expect(evil.status).toBe(404);
    expect((await f().request('POST', '/user/repos', { basic: ['alice', PASSWORD], body: { name: 'hidden', private: true, auto_init: true } })).status).toBe(201);
    expect((await f().request('GET', '/repos/alice/hidden/archive/main.zip')).status).toBe(404);
  });
});
