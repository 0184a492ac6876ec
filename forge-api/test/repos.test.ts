import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describeForge, PASSWORD } from './support/forge';

describeForge('repositories', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    await f().user('carl');
  });

  test('create with auto_init: README, LICENSE, .gitignore committed on the default branch; labels from the set', async () => {
    const res = await f().request('POST', '/user/repos', {
      ...as('alice'),
      body: { name: 'Project', description: 'Demo', auto_init: true, license: 'MIT', gitignores: 'Node', issue_labels: 'Default', default_branch: 'trunk', trust_model: 'committer' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Project',
      full_name: 'alice/Project',
      description: 'Demo',
      empty: false,
      private: false,
      default_branch: 'trunk',
      permissions: { admin: true, push: true, pull: true },
      clone_url: `${f().url}/alice/Project.git`,
      html_url: `${f().url}/alice/Project`,
      url: `${f().url}/api/v1/repos/alice/Project`,
      link: '/alice/Project',
    });
    expect(res.body.size).toBeGreaterThan(0);
    expect(res.body.owner.login).toBe('alice');
    const disk = path.join(f().dataDir, 'repositories', 'alice', 'project.git');
    const files = execFileSync('git', ['--git-dir', disk, 'ls-tree', '--name-only', 'trunk'], { encoding: 'utf8' }).trim().split('\n');
    expect(files.sort()).toEqual(['.gitignore', 'LICENSE', 'README.md']);
    const repo = await f().app.services.repos.findByOwnerAndName('alice', 'project');
    expect(repo!.trustModel).toBe('committer');
    const labels = await f().app.prisma.label.findMany({ where: { repoId: repo!.id } });
    expect(labels.map((l) => l.name).sort()).toEqual(['bug', 'duplicate', 'enhancement', 'help wanted', 'invalid', 'question', 'wontfix']);
  });

  test('without auto_init the repository is empty and keeps the default branch main', async () => {
    const res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'blank', template: true, trust_model: 'bogus' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ empty: true, default_branch: 'main', template: true, size: 0 });
    const repo = await f().app.services.repos.findByOwnerAndName('alice', 'blank');
    expect(repo!.trustModel).toBe('default');
  });

  test('names: unique per owner (409, case-insensitive), AlphaDashDot and reserved names 422, bad sets 422', async () => {
    let res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'PROJECT' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('The repository with the same name already exists.');
    expect((await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'project' } })).status).toBe(201);
    for (const name of ['a b', 'x.git', '..', 'wiki.wiki']) {
      res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name } });
      expect(res.status).toBe(422);
    }
    res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'labels', issue_labels: 'NoSuchSet' } });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'lic', auto_init: true, license: 'No-Such-License' } });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'branchy', default_branch: 'bad..name' } });
    expect(res.status).toBe(422);
    expect((await f().request('GET', '/repos/alice/lic')).status).toBe(404);
    expect(fs.existsSync(path.join(f().dataDir, 'repositories', 'alice', 'lic.git'))).toBe(false);
  });

  test('private repositories are 404 for anonymous and for users without access; collaborators see them', async () => {
    const res = await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } });
    expect(res.status).toBe(201);
    expect((await f().request('GET', '/repos/alice/secret')).status).toBe(404);
    expect((await f().request('GET', '/repos/alice/secret', as('bob'))).status).toBe(404);
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'secret'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: r.id, userId: bob.id, mode: 2 } });
    const seen = await f().request('GET', '/repos/alice/secret', as('bob'));
    expect(seen.status).toBe(200);
    expect(seen.body.permissions).toEqual({ admin: false, push: true, pull: true });
    const admin = await f().request('GET', '/repos/alice/secret', as('root'));
    expect(admin.body.permissions).toEqual({ admin: true, push: true, pull: true });
    // Deleting needs ownership: a writer gets 403, an outsider 404.
    expect((await f().request('DELETE', '/repos/alice/secret', as('bob'))).status).toBe(403);
    expect((await f().request('DELETE', '/repos/alice/secret', as('carl'))).status).toBe(404);
  });

  test('permissions object per caller on a public repository', async () => {
    expect((await f().request('GET', '/repos/alice/project')).body.permissions).toEqual({ admin: false, push: false, pull: true });
    expect((await f().request('GET', '/repos/alice/project', as('carl'))).body.permissions).toEqual({ admin: false, push: false, pull: true });
    expect((await f().request('GET', '/repos/alice/project', as('alice'))).body.permissions).toEqual({ admin: true, push: true, pull: true });
  });

  test('delete removes the row and the folder on disk', async () => {
    expect((await f().request('POST', '/user/repos', { ...as('carl'), body: { name: 'doomed', auto_init: true } })).status).toBe(201);
    const disk = path.join(f().dataDir, 'repositories', 'carl', 'doomed.git');
    expect(fs.existsSync(disk)).toBe(true);
    expect((await f().request('DELETE', '/repos/carl/doomed', as('carl'))).status).toBe(204);
    expect(fs.existsSync(disk)).toBe(false);
    expect((await f().request('GET', '/repos/carl/doomed', as('carl'))).status).toBe(404);
  });

  test('GET /user/repos and /users/{username}/repos', async () => {
    const mine = await f().request('GET', '/user/repos', as('alice'));
    expect(mine.body.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(['Project', 'blank', 'secret']));
    const theirs = await f().request('GET', '/users/alice/repos');
    expect(theirs.body.map((r: { name: string }) => r.name)).toEqual(['blank', 'Project']);
  });
});

describeForge('repository search', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  beforeAll(async () => {
    await f().user('sam');
    await f().user('tess');
    const sam = (await f().app.services.users.findByName('sam'))!;
    const tess = (await f().app.services.users.findByName('tess'))!;
    for (let i = 0; i < 12; i++) {
      await f().app.prisma.repository.create({
        data: { ownerId: sam.id, ownerName: 'sam', name: `alpha-${String(i).padStart(2, '0')}`, lowerName: `alpha-${String(i).padStart(2, '0')}`, description: i === 3 ? 'has a needle' : '', isPrivate: i % 4 === 0, isTemplate: i === 5, size: i },
      });
    }
    await f().app.prisma.repository.create({ data: { ownerId: tess.id, ownerName: 'tess', name: 'beta', lowerName: 'beta', isArchived: true } });
  });
  const names = (res: { body: { data: { full_name: string }[] } }) => res.body.data.map((r) => r.full_name);

  test('anonymous sees public repositories only, {ok, data} with X-Total-Count and Link', async () => {
    const res = await f().request('GET', '/repos/search?limit=5');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.headers.get('x-total-count')).toBe('10');
    expect(names(res)).toEqual(['sam/alpha-01', 'sam/alpha-02', 'sam/alpha-03', 'sam/alpha-05', 'sam/alpha-06']);
    expect(res.headers.get('link')).toBe(`<${f().url}/api/v1/repos/search?limit=5&page=2>; rel="next",<${f().url}/api/v1/repos/search?limit=5&page=2>; rel="last"`);
  });

  test('the owner also sees private ones unless private=false; is_private filters', async () => {
    expect((await f().request('GET', '/repos/search?limit=50', as('sam'))).headers.get('x-total-count')).toBe('13');
    expect((await f().request('GET', '/repos/search?private=false', as('sam'))).headers.get('x-total-count')).toBe('10');
    const only = await f().request('GET', '/repos/search?is_private=true', as('sam'));
    expect(names(only)).toEqual(['sam/alpha-00', 'sam/alpha-04', 'sam/alpha-08']);
    expect((await f().request('GET', '/repos/search?is_private=true', as('tess'))).body.data).toEqual([]);
  });

  test('q, includeDesc, uid, exclusive, template, archived, sort and order', async () => {
    expect(names(await f().request('GET', '/repos/search?q=BET'))).toEqual(['tess/beta']);
    expect(names(await f().request('GET', '/repos/search?q=needle'))).toEqual([]);
    expect(names(await f().request('GET', '/repos/search?q=needle&includeDesc=true'))).toEqual(['sam/alpha-03']);
    const tess = (await f().app.services.users.findByName('tess'))!;
    expect(names(await f().request(`GET`, `/repos/search?uid=${tess.id}&exclusive=true`))).toEqual(['tess/beta']);
    expect(names(await f().request('GET', '/repos/search?template=true'))).toEqual(['sam/alpha-05']);
    expect(names(await f().request('GET', '/repos/search?archived=true'))).toEqual(['tess/beta']);
    const bySize = await f().request('GET', '/repos/search?sort=size&order=desc&limit=2');
    expect(names(bySize)).toEqual(['sam/alpha-11', 'sam/alpha-10']);
    const prio = await f().request('GET', `/repos/search?priority_owner_id=${tess.id}&limit=2`);
    expect(names(prio)).toEqual(['tess/beta', 'sam/alpha-01']);
  });

  test('bad mode, sort or order are 422', async () => {
    expect((await f().request('GET', '/repos/search?mode=weird')).status).toBe(422);
    const sort = await f().request('GET', '/repos/search?sort=nope');
    expect(sort.status).toBe(422);
    expect(sort.body.message).toBe('Invalid sort mode: "nope"');
    expect((await f().request('GET', '/repos/search?sort=alpha&order=sideways')).status).toBe(422);
    expect(names(await f().request('GET', '/repos/search?mode=fork'))).toEqual([]);
  });
});
