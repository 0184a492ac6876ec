/**
 * Gitea's own JS client (gitea-js) against the forge: template, rendering and nodeinfo calls,
 * then a repository created through the client is cloned and pushed to with a token.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git } from '../forge-api/test/support/git';
import { giteaApi } from 'gitea-js';
import { describeForge } from '../forge-api/test/support/forge';


describeForge('gitea-js: templates, rendering, repositories over git', (f) => {
  let token: string;
  let api: ReturnType<typeof giteaApi>;
  let work: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-gitea-js-'));
    await f().user('erin');
    token = await f().token('erin', ['write:repository', 'write:user']);
    api = giteaApi(f().url, { token });
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('template endpoints', async () => {
    const licenses = await api.licenses.listLicenseTemplates();
    expect(licenses.data.map((l) => l.key)).toContain('GPL-3.0');
    const mit = await api.licenses.getLicenseTemplateInfo('MIT');
    expect(mit.data.body).toContain('MIT License');
    expect((await api.gitignore.listGitignoresTemplates()).data).toContain('Go');
    expect((await api.gitignore.getGitignoreTemplateInfo('Go')).data.source).toContain('go.work');
    expect((await api.label.listLabelTemplates()).data).toEqual(['Advanced', 'Default']);
    const adv = await api.label.getLabelTemplateInfo('Advanced');
    expect(adv.data.find((l) => l.name === 'Reviewed/Duplicate')).toEqual({ name: 'Reviewed/Duplicate', exclusive: true, color: '616161', description: 'This issue or pull request already exists' });
    await expect(api.label.getLabelTemplateInfo('Missing')).rejects.toMatchObject({ status: 404 });
    const node = await api.nodeinfo.getNodeInfo();
    expect(node.data.version).toBe('2.1');
    expect(node.data.usage?.users?.total).toBeGreaterThanOrEqual(1);
  });

  test('rendering (HTML answers are read as text, as with Gitea)', async () => {
    const md = await api.markdown.renderMarkdown({ Text: '# Title\n\n- [x] done', Mode: 'gfm', Context: '/erin/x' }, { format: 'text' });
    expect(md.data).toContain('<h1 id="user-content-title">Title</h1>');
    expect(md.data).toContain('checked');
    const raw = await api.markdown.renderMarkdownRaw('~~gone~~' as never, { format: 'text' });
    expect(raw.data).toBe('<p><s>gone</s></p>\n');
    const markup = await api.markup.renderMarkup({ Text: 'hi @erin', Mode: 'comment', Context: '/erin/x' }, { format: 'text' });
    expect(markup.data).toBe(`<p>hi <a href="${f().url}/erin" class="mention" rel="nofollow">@erin</a></p>\n`);
  });

  test('a repository created through the client clones and takes a push with the token', async () => {
    const created = await api.user.createCurrentUserRepo({ name: 'from-js', auto_init: true, license: 'Apache-2.0', gitignores: 'Python', issue_labels: 'Advanced', private: true });
    expect(created.status).toBe(201);
    expect(created.data.empty).toBe(false);
    const u = new URL(created.data.clone_url!);
    u.username = 'erin';
    u.password = token;
    const dir = path.join(work, 'from-js');
    expect((await git(work, 'clone', '-q', u.toString(), dir)).exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8')).toContain('Apache License');
    expect(fs.readFileSync(path.join(dir, '.gitignore'), 'utf8')).toMatch(/^# ---> Python\n/);
    fs.writeFileSync(path.join(dir, 'main.py'), 'print("hi")\n');
    await git(dir, 'add', 'main.py');
    await git(dir, 'commit', '-q', '-m', 'code');
    expect((await git(dir, 'push', '-q', 'origin', 'main')).exitCode).toBe(0);
    const repo = await api.repos.repoGet('erin', 'from-js');
    expect(repo.data.size).toBeGreaterThanOrEqual(created.data.size!);
  });
});
