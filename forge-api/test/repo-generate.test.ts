import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('generate from a template repository', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const auth = (name: string) => `http://${name}:${PASSWORD}@${new URL(f().url).host}`;
  let tmp: string;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'generate-'));
    await f().user('root', { admin: true });
    await f().user('alice');
    await f().user('bob');
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'tmpl', template: true, description: 'a template' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'plain' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { ...as('alice'), body: { username: 'acme' } })).status).toBe(201);
    const w = path.join(tmp, 'src');
    await git(tmp, 'init', '-q', '-b', 'main', 'src');
    fs.mkdirSync(path.join(w, '.gitea'));
    fs.writeFileSync(path.join(w, '.gitea', 'template'), '# expand these\nREADME.md\n*.txt\n');
    fs.writeFileSync(path.join(w, 'README.md'), 'Project $REPO_NAME by ${REPO_OWNER_UPPER} from $TEMPLATE_NAME ($UNKNOWN)\n');
    fs.writeFileSync(path.join(w, '$REPO_NAME.txt'), '${REPO_NAME_SNAKE}\n');
    fs.writeFileSync(path.join(w, 'keep.md'), 'keep $REPO_NAME\n');
    fs.writeFileSync(path.join(w, 'run.sh'), '#!/bin/sh\n');
    fs.chmodSync(path.join(w, 'run.sh'), 0o755);
    await git(w, 'add', '-A');
    await git(w, 'commit', '-qm', 'one');
    await git(w, 'commit', '-q', '--allow-empty', '-m', 'two');
    expect((await git(w, 'push', '-q', `${auth('alice')}/alice/tmpl.git`, 'main')).exitCode).toBe(0);
    await f().request('POST', '/repos/alice/tmpl/labels', { ...as('alice'), body: { name: 'bug', color: '#ff0000', description: 'broken' } });
    await f().request('POST', '/repos/alice/tmpl/hooks', { ...as('alice'), body: { type: 'gitea', config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' }, events: ['push'], active: true } });
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test("Gitea's refusals: not a template 422, nothing selected 422, unknown owner 404 {error}, another user 403, anonymous 401", async () => {
    let res = await f().request('POST', '/repos/alice/plain/generate', { ...as('alice'), body: { owner: 'alice', name: 'g0', git_content: true } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('this is not a template repo');
    res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('alice'), body: { owner: 'alice', name: 'g0' } });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('must select at least one template item');
    res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('alice'), body: { name: 'g0', git_content: true } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'request owner `` does not exist' });
    res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('bob'), body: { owner: 'alice', name: 'g0', git_content: true } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Only admin can generate repository for other user.');
    res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('bob'), body: { owner: 'acme', name: 'g0', git_content: true } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('Given user is not allowed to create repository in organization.');
    expect((await f().request('POST', '/repos/alice/tmpl/generate', { body: { owner: 'alice', name: 'g0', git_content: true } })).status).toBe(401);
    expect((await f().request('GET', '/repos/alice/g0', as('alice'))).status).toBe(404);
  });

  test('git content is one fresh commit with .gitea/template applied; labels and webhooks copied', async () => {
    const res = await f().request('POST', '/repos/alice/tmpl/generate', {
      ...as('bob'),
      body: { owner: 'bob', name: 'MyApp', description: 'mine', private: true, git_content: true, labels: true, webhooks: true },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ full_name: 'bob/MyApp', description: 'mine', private: true, empty: false, template: false, default_branch: 'main', fork: false, permissions: { admin: true } });
    expect(res.body.size).toBeGreaterThanOrEqual(0);
    const w = path.join(tmp, 'gen');
    expect((await git(tmp, 'clone', '-q', `${auth('bob')}/bob/MyApp.git`, 'gen')).exitCode).toBe(0);
    const log = (await git(w, 'log', '--format=%an|%s')).stdout.trim().split('\n');
    expect(log).toEqual(['bob|Initial commit']);
    expect(fs.existsSync(path.join(w, '.gitea'))).toBe(false);
    expect(fs.readFileSync(path.join(w, 'README.md'), 'utf8')).toBe('Project MyApp by BOB from tmpl (UNKNOWN)\n');
    expect(fs.readFileSync(path.join(w, 'MyApp.txt'), 'utf8')).toBe('my_app\n');
    expect(fs.readFileSync(path.join(w, 'keep.md'), 'utf8')).toBe('keep $REPO_NAME\n');
    expect(fs.statSync(path.join(w, 'run.sh')).mode & 0o111).not.toBe(0);
    const labels = await f().request('GET', '/repos/bob/MyApp/labels', as('bob'));
    expect(labels.body.map((l: { name: string; color: string; description: string }) => [l.name, l.color, l.description])).toEqual([['bug', 'ff0000', 'broken']]);
    const hooks = await f().request('GET', '/repos/bob/MyApp/hooks', as('bob'));
    expect(hooks.body.map((h: { config: { url: string } }) => h.config.url)).toEqual(['http://127.0.0.1:9/hook']);
    const again = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('bob'), body: { owner: 'bob', name: 'myapp', git_content: true } });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('The repository with the same name already exists.');
  });

  test('into an organization with another default branch; without git content the repository is empty', async () => {
    let res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('alice'), body: { owner: 'acme', name: 'svc', default_branch: 'trunk', git_content: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ full_name: 'acme/svc', default_branch: 'trunk', empty: false });
    const disk = path.join(f().dataDir, 'repositories', 'acme', 'svc.git');
    expect((await git(disk, 'symbolic-ref', 'HEAD')).stdout.trim()).toBe('refs/heads/trunk');
    expect((await git(disk, 'show', 'trunk:README.md')).stdout).toBe('Project svc by ACME from tmpl (UNKNOWN)');
    res = await f().request('POST', '/repos/alice/tmpl/generate', { ...as('alice'), body: { owner: 'alice', name: 'labels-only', labels: true } });
    expect(res.status).toBe(201);
    expect(res.body.empty).toBe(true);
  });
});
