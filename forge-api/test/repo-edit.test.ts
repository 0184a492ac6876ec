import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

// A 2x3 PNG (header is enough for the size check, the rest is a valid tiny image).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000002000000030806000000b5f3e5a60000001249444154789c63f8cfc0f09f8181e13f030000a0fa0d0ddd3c7d3b0000000049454e44ae426082',
  'hex',
);

describeForge('repository edit, avatar, by id', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const auth = (name: string) => `http://${name}:${PASSWORD}@${new URL(f().url).host}`;
  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    for (const name of ['proj', 'other']) {
      expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name, auto_init: true } })).status).toBe(201);
    }
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'proj'))!;
    const bob = (await f().app.services.users.findByName('bob'))!;
    await f().app.prisma.collaboration.create({ data: { repoId: r.id, userId: bob.id, mode: 2 } });
  });

  test('only a repository admin may edit: a writer gets reqAdmin 403, anonymous 401, a stranger 404', async () => {
    let res = await f().request('PATCH', '/repos/alice/proj', { ...as('bob'), body: { description: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    expect((await f().request('PATCH', '/repos/alice/proj', { body: { description: 'x' } })).status).toBe(401);
    await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { private: true } });
    res = await f().request('PATCH', '/repos/alice/other', { ...as('bob'), body: { description: 'x' } });
    expect(res.status).toBe(404);
    await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { private: false } });
  });

  test('basic fields, units and merge settings change; fields not sent stay', async () => {
    const res = await f().request('PATCH', '/repos/alice/proj', {
      ...as('alice'),
      body: {
        description: 'New text',
        website: 'https://example.com',
        template: true,
        has_wiki: false,
        has_projects: true,
        projects_mode: 'repo',
        internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: false, enable_issue_dependencies: true },
        has_issues: true,
        allow_squash_merge: false,
        default_merge_style: 'rebase',
        default_delete_branch_after_merge: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'proj',
      description: 'New text',
      website: 'https://example.com',
      template: true,
      private: false,
      has_wiki: false,
      has_projects: true,
      projects_mode: 'repo',
      has_issues: true,
      internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: false, enable_issue_dependencies: true },
      allow_squash_merge: false,
      allow_rebase: true,
      default_merge_style: 'rebase',
      default_delete_branch_after_merge: true,
      permissions: { admin: true, push: true, pull: true },
    });
    const again = await f().request('GET', '/repos/alice/proj', as('alice'));
    expect(again.body).toMatchObject({ description: 'New text', has_wiki: false, allow_squash_merge: false });
    // Without the pull request unit Gitea reports fixed values.
    const off = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { has_pull_requests: false } });
    expect(off.body).toMatchObject({ has_pull_requests: false, allow_merge_commits: false, allow_manual_merge: true, default_merge_style: 'merge' });
    const on = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { has_pull_requests: true } });
    expect(on.body).toMatchObject({ has_pull_requests: true, allow_squash_merge: false, default_merge_style: 'rebase' });
  });

  test('external tracker and wiki replace the internal ones; bad URLs are 422 with Gitea messages', async () => {
    let res = await f().request('PATCH', '/repos/alice/other', {
      ...as('alice'),
      body: { has_issues: true, external_tracker: { external_tracker_url: 'https://tracker.example/', external_tracker_format: 'https://tracker.example/{user}/{repo}/{index}', external_tracker_style: 'numeric' }, has_wiki: true, external_wiki: { external_wiki_url: 'https://wiki.example/' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.has_issues).toBe(true);
    expect(res.body.internal_tracker).toBeUndefined();
    expect(res.body.external_tracker).toEqual({
      external_tracker_url: 'https://tracker.example/',
      external_tracker_format: 'https://tracker.example/{user}/{repo}/{index}',
      external_tracker_style: 'numeric',
      external_tracker_regexp_pattern: '',
    });
    expect(res.body.external_wiki).toEqual({ external_wiki_url: 'https://wiki.example/' });
    // The internal tracker is off: its routes answer 404.
    expect((await f().request('GET', '/repos/alice/other/issues', as('alice'))).status).toBe(404);
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { has_issues: true, external_tracker: { external_tracker_url: 'nope' } } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('External tracker URL not valid');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { has_wiki: true, external_wiki: { external_wiki_url: 'ftp://x' } } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Invalid external wiki URL');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { projects_mode: 'bad' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[ProjectsMode]: In');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { allow_merge_update: false, allow_rebase_update: false } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('at least one pull request branch update style must be enabled');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { has_issues: true, has_wiki: true } });
    expect(res.body).toMatchObject({ has_issues: true, has_wiki: true, internal_tracker: { enable_time_tracker: true } });
    expect(res.body.external_tracker).toBeUndefined();
    expect((await f().request('GET', '/repos/alice/other/issues', as('alice'))).status).toBe(200);
  });

  test('default_branch changes only to an existing branch (HEAD follows); a missing one is ignored', async () => {
    const disk = path.join(f().dataDir, 'repositories', 'alice', 'proj.git');
    await git(disk, 'branch', 'dev', 'main');
    let res = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { default_branch: 'nope' } });
    expect(res.status).toBe(200);
    expect(res.body.default_branch).toBe('main');
    res = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { default_branch: 'dev' } });
    expect(res.body.default_branch).toBe('dev');
    expect((await git(disk, 'symbolic-ref', 'HEAD')).stdout.trim()).toBe('refs/heads/dev');
    await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { default_branch: 'main' } });
  });

  test('rename moves the git folder; taken, invalid and reserved names are 422', async () => {
    let res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { name: 'proj' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('repository already exists [uname: alice, name: proj]');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { name: 'a b' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('[Name]: AlphaDashDot');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { name: 'x.git' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('name pattern is not allowed [pattern: *.git]');
    res = await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { name: 'Renamed' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', full_name: 'alice/Renamed', clone_url: `${f().url}/alice/Renamed.git` });
    const reposDir = path.join(f().dataDir, 'repositories', 'alice');
    expect(fs.existsSync(path.join(reposDir, 'renamed.git'))).toBe(true);
    expect(fs.existsSync(path.join(reposDir, 'other.git'))).toBe(false);
    expect((await f().request('GET', '/repos/alice/Renamed', as('alice'))).status).toBe(200);
    // git clones under the new name
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rename-'));
    try {
      const c = await git(tmp, 'clone', '-q', `${auth('alice')}/alice/Renamed.git`, 'w');
      expect(c.exitCode).toBe(0);
      expect(fs.existsSync(path.join(tmp, 'w', 'README.md'))).toBe(true);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    res = await f().request('PATCH', '/repos/alice/Renamed', { ...as('alice'), body: { name: 'other' } });
    expect(res.body.name).toBe('other');
  });

  test('archived: API writes 423, git push refused with Gitea message, clone works, edit still allowed, un-archive restores', async () => {
    let res = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { archived: true } });
    expect(res.status).toBe(200);
    expect(res.body.archived).toBe(true);
    expect(res.body.archived_at).not.toBe('1970-01-01T00:00:00Z');
    res = await f().request('POST', '/repos/alice/proj/issues', { ...as('alice'), body: { title: 't' } });
    expect(res.status).toBe(423);
    expect(res.body.message).toBe('repo is archived');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'archived-'));
    try {
      expect((await git(tmp, 'clone', '-q', `${auth('alice')}/alice/proj.git`, 'w')).exitCode).toBe(0);
      const w = path.join(tmp, 'w');
      fs.writeFileSync(path.join(w, 'new.txt'), 'x');
      await git(w, 'add', '.');
      await git(w, 'commit', '-qm', 'more');
      const push = await git(w, 'push', 'origin', 'HEAD');
      expect(push.exitCode).not.toBe(0);
      expect(push.stderr).toContain('This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.');
      res = await f().request('PATCH', '/repos/alice/proj', { ...as('alice'), body: { description: 'still editable', archived: false } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ archived: false, description: 'still editable' });
      expect((await git(w, 'push', 'origin', 'HEAD')).exitCode).toBe(0);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('avatar: base64 image stored, avatar_url serves it; bad base64 400, not an image 422; delete clears it', async () => {
    let res = await f().request('POST', '/repos/alice/proj/avatar', { ...as('bob'), body: { image: PNG.toString('base64') } });
    expect(res.status).toBe(403);
    res = await f().request('POST', '/repos/alice/proj/avatar', { ...as('alice'), body: { image: '!!!' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('illegal base64 data at input byte 0');
    res = await f().request('POST', '/repos/alice/proj/avatar', { ...as('alice'), body: { image: Buffer.from('hello').toString('base64') } });
    expect(res.status).toBe(422);
    res = await f().request('POST', '/repos/alice/proj/avatar', { ...as('alice'), body: { image: PNG.toString('base64') } });
    expect(res.status).toBe(204);
    const repo = await f().request('GET', '/repos/alice/proj', as('alice'));
    expect(repo.body.avatar_url).toMatch(new RegExp(`^${f().url}/repo-avatars/\\d+-[0-9a-f]{32}$`));
    const img = await fetch(repo.body.avatar_url);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    res = await f().request('DELETE', '/repos/alice/proj/avatar', as('alice'));
    expect(res.status).toBe(204);
    expect((await f().request('GET', '/repos/alice/proj', as('alice'))).body.avatar_url).toBe('');
    expect((await fetch(repo.body.avatar_url)).status).toBe(404);
  });

  test('GET /repositories/{id}: needs a token or sign-in (401), 404 for missing or unreadable', async () => {
    const r = (await f().app.services.repos.findByOwnerAndName('alice', 'proj'))!;
    expect((await f().request('GET', `/repositories/${r.id}`)).status).toBe(401);
    const res = await f().request('GET', `/repositories/${r.id}`, as('bob'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: r.id, full_name: 'alice/proj', permissions: { admin: false, push: true, pull: true } });
    expect((await f().request('GET', '/repositories/99999', as('bob'))).status).toBe(404);
    await f().request('PATCH', '/repos/alice/other', { ...as('alice'), body: { private: true } });
    const o = (await f().app.services.repos.findByOwnerAndName('alice', 'other'))!;
    expect((await f().request('GET', `/repositories/${o.id}`, as('bob'))).status).toBe(404);
    expect((await f().request('GET', `/repositories/${o.id}`, as('root'))).status).toBe(200);
  });
});
