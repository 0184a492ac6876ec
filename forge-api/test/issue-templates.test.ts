import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

/** Files pushed to a repository and the answers a real Gitea 1.27.3 gave for them. */
const FILES: Record<string, string> = {
  '.gitea/ISSUE_TEMPLATE/bug.md': '---\nname: Bug\nabout: Report a bug\ntitle: "[BUG] "\nlabels: bug, triage\nref: main\n---\nDescribe it\n',
  '.gitea/ISSUE_TEMPLATE/feature.yaml':
    'name: Feature\ndescription: Ask\nlabels: [enhancement]\nbody:\n  - type: markdown\n    attributes:\n      value: hi\n  - type: textarea\n    id: what\n    attributes:\n      label: What\n',
  '.gitea/ISSUE_TEMPLATE/broken.md': '---\nname: NoAbout\n---\nx\n',
  '.gitea/ISSUE_TEMPLATE/config.yml': 'blank_issues_enabled: false\ncontact_links:\n  - name: Forum\n    url: https://forum.example\n    about: Ask there\n',
  '.github/ISSUE_TEMPLATE/plain.md': 'plain text\n',
};
const GITEA_TEMPLATES = [
  { name: 'Bug', title: '[BUG] ', about: 'Report a bug', labels: ['bug', 'triage'], assignees: null, ref: 'refs/heads/main', content: 'Describe it\n', body: null, file_name: '.gitea/ISSUE_TEMPLATE/bug.md' },
  {
    name: 'Feature',
    title: '',
    about: 'Ask',
    labels: ['enhancement'],
    assignees: null,
    ref: 'refs/heads/',
    content: '',
    body: [
      { type: 'markdown', id: '0', attributes: { value: 'hi' }, validations: null, visible: ['form'] },
      { type: 'textarea', id: 'what', attributes: { label: 'What' }, validations: null, visible: ['form', 'content'] },
    ],
    file_name: '.gitea/ISSUE_TEMPLATE/feature.yaml',
  },
  { name: 'plain.md', title: '', about: 'plain text\n', labels: null, assignees: null, ref: 'refs/heads/', content: 'plain text\n', body: null, file_name: '.github/ISSUE_TEMPLATE/plain.md' },
];

describeForge('issue templates and config, signing keys, git hooks', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  let tmp: string;
  async function push(repo: string, files: Record<string, string>) {
    const w = path.join(tmp, repo);
    await git(tmp, 'init', '-q', '-b', 'main', repo);
    for (const [p, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(w, p)), { recursive: true });
      fs.writeFileSync(path.join(w, p), text);
    }
    await git(w, 'add', '-A');
    await git(w, 'commit', '-qm', 'templates');
    const r = await git(w, 'push', '-q', `http://alice:${PASSWORD}@${new URL(f().url).host}/alice/${repo}.git`, 'main');
    expect(r.exitCode).toBe(0);
  }
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'issue-templates-'));
    await f().user('alice');
    await f().user('bob');
    for (const name of ['it', 'empty', 'badcfg']) expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name } })).status).toBe(201);
    await push('it', FILES);
    await push('badcfg', { '.github/ISSUE_TEMPLATE/config.yaml': 'contact_links:\n  - name: X\n    about: y\n' });
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('templates as Gitea 1.27.3 answers them: front matter, forms, plain markdown; a broken one counted in X-Gitea-Warning', async () => {
    const res = await f().request('GET', '/repos/alice/it/issue_templates');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(GITEA_TEMPLATES);
    expect(res.headers.get('x-gitea-warning')).toBe('error occurs when parsing issue template: count=1');
  });

  test('config and its validation; an empty repository answers null templates and the default config', async () => {
    expect((await f().request('GET', '/repos/alice/it/issue_config')).body).toEqual({ blank_issues_enabled: false, contact_links: [{ name: 'Forum', url: 'https://forum.example', about: 'Ask there' }] });
    expect((await f().request('GET', '/repos/alice/it/issue_config/validate')).body).toEqual({ valid: true, message: '' });
    const empty = await f().request('GET', '/repos/alice/empty/issue_templates');
    expect(empty.status).toBe(200);
    expect(empty.text).toBe('null');
    expect((await f().request('GET', '/repos/alice/empty/issue_config')).body).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect((await f().request('GET', '/repos/alice/badcfg/issue_config')).body).toEqual({ blank_issues_enabled: true, contact_links: [] });
    expect((await f().request('GET', '/repos/alice/badcfg/issue_config/validate')).body).toEqual({ valid: false, message: 'contact_link at position 1 is missing url key' });
  });

  test('no signing key: 404 "no signing key" globally and per repository', async () => {
    for (const p of ['/signing-key.gpg', '/signing-key.pub', '/repos/alice/it/signing-key.gpg', '/repos/alice/it/signing-key.pub']) {
      const res = await f().request('GET', p);
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('no signing key');
    }
    expect((await f().request('GET', '/repos/alice/nope/signing-key.gpg')).status).toBe(404);
  });

  test('git hooks are never editable: 401 anonymous, reqAdmin 403 for a non-admin, then 403 "must be allowed to edit Git hooks"', async () => {
    expect((await f().request('GET', '/repos/alice/it/hooks/git')).status).toBe(401);
    const bob = await f().request('GET', '/repos/alice/it/hooks/git', as('bob'));
    expect(bob.status).toBe(403);
    expect(bob.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    for (const [method, p] of [['GET', '/hooks/git'], ['GET', '/hooks/git/pre-receive'], ['PATCH', '/hooks/git/pre-receive'], ['DELETE', '/hooks/git/update']]) {
      const res = await f().request(method, `/repos/alice/it${p}`, { ...as('alice'), body: method === 'PATCH' ? { content: 'echo hi' } : undefined });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('must be allowed to edit Git hooks');
    }
    // Webhooks still answer on their own path.
    expect((await f().request('GET', '/repos/alice/it/hooks', as('alice'))).status).toBe(200);
  });
});
