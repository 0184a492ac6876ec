/**
 * Gitea's own JS client (gitea-js) reads the git data API of a repository whose history the
 * real git CLI made and pushed: refs, commits (list, single, diff), trees, blobs, annotated
 * tags, notes, compare, languages, licenses, editorconfig; and reports commit statuses that
 * the combined status then shows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { describeForge, PASSWORD } from '../forge-api/test/support/forge';
import { makeSampleHistory, pushSampleHistory, type SampleHistory } from '../forge-api/test/support/git-history';

describeForge('gitea-js: git data and commit statuses', (f) => {
  let api: ReturnType<typeof giteaApi>;
  let tmp: string;
  let h: SampleHistory;
  let main: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'git-data-gitea-js-'));
    await f().user('ivy');
    api = giteaApi(f().url, { token: await f().token('ivy', ['write:repository', 'write:user']) });
    await api.user.createCurrentUserRepo({ name: 'lib', default_branch: 'main' });
    h = await makeSampleHistory(path.join(tmp, 'work'), 'ivy@example.com');
    const remote = new URL(`${f().url}/ivy/lib.git`);
    remote.username = 'ivy';
    remote.password = PASSWORD;
    await pushSampleHistory(h, remote.toString());
    main = (await h.git('rev-parse', 'main')).trim();
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('refs, commits, trees, blobs, tags, notes', async () => {
    expect((await api.repos.repoListAllGitRefs('ivy', 'lib')).data.map((r) => r.ref)).toContain('refs/tags/v1.0');
    expect((await api.repos.repoListGitRefs('ivy', 'lib', 'heads/ma')).data.map((r) => r.ref)).toEqual(['refs/heads/main', 'refs/heads/maint']);
    const commits = await api.repos.repoGetAllCommits('ivy', 'lib', { sha: 'main', limit: 2 });
    expect(commits.data.map((c) => c.sha)).toEqual([main, (await h.git('rev-parse', 'main~1')).trim()]);
    expect(commits.headers.get('x-total-count')).toBe('4');
    expect(commits.data[0].author?.login).toBe('ivy');
    const single = await api.repos.repoGetSingleCommit('ivy', 'lib', main);
    expect(single.data.files).toEqual([{ filename: 'mainwork.txt', status: 'added' }]);
    const diff = await api.repos.repoDownloadCommitDiffOrPatch('ivy', 'lib', main, 'diff', { format: 'text' });
    expect(String(diff.data)).toContain('+++ b/mainwork.txt');
    const tree = await api.repos.getTree('ivy', 'lib', 'main', { recursive: true });
    expect(tree.data.total_count).toBe(13);
    const readme = tree.data.tree!.find((e) => e.path === 'README.md')!;
    const blob = await api.repos.getBlob('ivy', 'lib', readme.sha!);
    expect(Buffer.from(blob.data.content!, 'base64').toString()).toBe('# Sample\nmore\n');
    const tag = await api.repos.getAnnotatedTag('ivy', 'lib', (await h.git('rev-parse', 'v1.0')).trim());
    expect([tag.data.tag, tag.data.object?.sha]).toEqual(['v1.0', main]);
    expect((await api.repos.repoGetNote('ivy', 'lib', 'main')).data.message).toBe('a note on head\n');
    await expect(api.repos.repoGetSingleCommit('ivy', 'lib', 'nope')).rejects.toMatchObject({ status: 404 });
  });

  test('compare, languages, licenses, editorconfig', async () => {
    expect((await api.repos.repoCompareDiff('ivy', 'lib', 'maint...main')).data.total_commits).toBe(2);
    expect((await api.repos.repoGetLanguages('ivy', 'lib')).data).toEqual({ Go: 56, Python: 37, TypeScript: 20, Shell: 18 });
    expect((await api.repos.repoGetLicenses('ivy', 'lib')).data).toEqual(['MIT']);
    const ec = await api.repos.repoGetEditorConfig('ivy', 'lib', 'main.go');
    expect(ec.status).toBe(200);
  });

  test('statuses reported through gitea-js make up the combined status', async () => {
    expect((await api.repos.repoCreateStatus('ivy', 'lib', main, { state: 'pending' as any, context: 'ci/build' })).status).toBe(201);
    expect((await api.repos.repoCreateStatus('ivy', 'lib', main, { state: 'success' as any, context: 'ci/build', target_url: 'http://ci.example/1' })).status).toBe(201);
    expect((await api.repos.repoCreateStatus('ivy', 'lib', main, { state: 'success' as any, context: 'ci/lint' })).status).toBe(201);
    const combined = await api.repos.repoGetCombinedStatusByRef('ivy', 'lib', 'main');
    expect([combined.data.state, combined.data.total_count]).toEqual(['success', 2]);
    expect((await api.repos.repoListStatuses('ivy', 'lib', main)).data).toHaveLength(3);
    expect((await api.repos.repoListStatusesByRef('ivy', 'lib', 'v1.0')).data).toHaveLength(3);
  });
});
