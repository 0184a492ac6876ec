/**
 * The git data API (/git/refs, /git/commits, /git/trees, /git/blobs, /git/tags, /git/notes,
 * /commits, /compare, /languages, /licenses, /editorconfig) on a history pushed with the real
 * git CLI. Expected statuses, messages, headers and values are what a real Gitea 1.27.3
 * answered for the same history (support/git-history.ts), on SQLite and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { makeSampleHistory, pushSampleHistory, type SampleHistory } from './support/git-history';

describeForge('git data API', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const repo = '/repos/root/sample';
  let tmp: string;
  let h: SampleHistory;
  const sha: Record<string, string> = {};

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'git-data-'));
    await f().user('root');
    await f().user('stranger');
    expect((await f().request('POST', '/user/repos', { ...as('root'), body: { name: 'sample', default_branch: 'main' } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('root'), body: { name: 'hidden', private: true } })).status).toBe(201);
    expect((await f().request('POST', '/user/repos', { ...as('root'), body: { name: 'empty' } })).status).toBe(201);
    h = await makeSampleHistory(path.join(tmp, 'work'), 'root@example.com');
    const remote = new URL(`${f().url}/root/sample.git`);
    remote.username = 'root';
    remote.password = PASSWORD;
    await pushSampleHistory(h, remote.toString());
    for (const [name, rev] of Object.entries({ main: 'main', first: 'main~3', sources: 'main~2', modify: 'main~1', feature: 'feature', tag: 'v1.0', readme: 'main:README.md', tree: 'main^{tree}' })) {
      sha[name] = (await h.git('rev-parse', rev)).trim();
    }
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('refs: all, by string prefix (always a list), remote refs hidden, none is 404', async () => {
    const all = await f().request('GET', `${repo}/git/refs`, as('root'));
    expect(all.status).toBe(200);
    expect(all.body.map((r: any) => r.ref)).toEqual(['refs/heads/feature', 'refs/heads/main', 'refs/heads/maint', 'refs/notes/commits', 'refs/tags/light', 'refs/tags/v1.0']);
    const v1 = all.body.find((r: any) => r.ref === 'refs/tags/v1.0');
    expect(v1).toEqual({
      ref: 'refs/tags/v1.0',
      url: `${f().api}${repo}/git/refs/tags/v1.0`,
      object: { type: 'tag', sha: sha.tag, url: `${f().api}${repo}/git/tags/${sha.tag}` },
    });
    const main = await f().request('GET', `${repo}/git/refs/heads/main`, as('root'));
    expect(main.body.map((r: any) => r.ref)).toEqual(['refs/heads/main', 'refs/heads/maint']);
    expect(main.body[0].object).toEqual({ type: 'commit', sha: sha.main, url: `${f().api}${repo}/git/commits/${sha.main}` });
    const none = await f().request('GET', `${repo}/git/refs/nothing`, as('root'));
    expect(none.status).toBe(404);
    expect(none.body.message).toBe('not found');
  });

  test('a single commit: Gitea record with user, files, stats, verification; bad names 404/422', async () => {
    const res = await f().request('GET', `${repo}/git/commits/main`, as('root'));
    expect(res.status).toBe(200);
    const c = res.body;
    expect(c.sha).toBe(sha.main);
    expect(c.created).toBe('2024-01-05T12:00:00Z');
    expect(c.html_url).toBe(`${f().url}/root/sample/commit/${sha.main}`);
    expect(c.commit.author).toEqual({ name: 'Root Person', email: 'root@example.com', date: '2024-01-05T12:00:00Z' });
    expect(c.commit.message).toBe('main commit after branch\n');
    expect(c.commit.tree).toEqual({ url: `${f().api}${repo}/git/trees/${sha.main}`, sha: sha.main, created: '2024-01-05T12:00:00Z' });
    expect(c.commit.verification).toEqual({ verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' });
    expect(c.author.login).toBe('root');
    expect(c.committer).toBeNull();
    expect(c.parents).toEqual([{ url: `${f().api}${repo}/git/commits/${sha.modify}`, sha: sha.modify, created: '0001-01-01T00:00:00Z' }]);
    expect(c.files).toEqual([{ filename: 'mainwork.txt', status: 'added' }]);
    expect(c.stats).toEqual({ total: 1, additions: 1, deletions: 0 });

    const sources = await f().request('GET', `${repo}/git/commits/${sha.sources}?stat=false&files=0&verification=false`, as('root'));
    expect(sources.body.commit.author.date).toBe('2024-01-02T11:00:00-05:00');
    expect(sources.body.commit.message).toBe('add sources\n\nwith a body line\n');
    expect([sources.body.files, sources.body.stats, sources.body.commit.verification]).toEqual([null, null, null]);
    const modify = await f().request('GET', `${repo}/git/commits/${sha.modify}`, as('root'));
    expect(modify.body.stats).toEqual({ total: 5, additions: 3, deletions: 2 });
    expect(modify.body.files.map((x: any) => `${x.status} ${x.filename}`).sort()).toEqual(['modified README.md', 'modified src/tool.py', 'removed docs/style.css']);

    const tag = await f().request('GET', `${repo}/git/commits/v1.0`, as('root'));
    expect(tag.body.sha).toBe(sha.main);
    for (const [p, status, message] of [
      ['zzz', 404, "commit doesn't exist: zzz"],
      ['0000000000000000000000000000000000000000', 404, "commit doesn't exist: 0000000000000000000000000000000000000000"],
      ['a..b', 422, 'no valid ref or sha: a..b'],
      ['main~1', 422, 'no valid ref or sha: main~1'],
    ] as const) {
      const r = await f().request('GET', `${repo}/git/commits/${encodeURIComponent(p)}`, as('root'));
      expect([r.status, r.body.message]).toEqual([status, message]);
    }
  });

  test('.diff and .patch of a commit are git output as text', async () => {
    const diff = await f().request('GET', `${repo}/git/commits/main~2.diff`, as('root'));
    expect(diff.status).toBe(200);
    expect(diff.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(diff.text).toBe(await h.git('diff', '--find-renames=50%', sha.first, sha.sources).then((t) => `${t}\n`));
    const patch = await f().request('GET', `${repo}/git/commits/main.patch`, as('root'));
    expect(patch.text.startsWith(`From ${sha.main} Mon Sep 17 00:00:00 2001\nFrom: Root Person <root@example.com>\nDate: Fri, 5 Jan 2024 12:00:00 +0000\nSubject: [PATCH] main commit after branch\n`)).toBe(true);
    const root = await f().request('GET', `${repo}/git/commits/${sha.first}.diff`, as('root'));
    expect(root.text).toContain('+++ b/LICENSE');
    expect((await f().request('GET', `${repo}/git/commits/nope.diff`, as('root'))).status).toBe(404);
  });

  test('commit list: paging in git with Gitea headers, sha/path/not/since/until', async () => {
    const page = await f().request('GET', `${repo}/commits?limit=2&page=2&stat=false&verification=false&files=false`, as('root'));
    expect(page.status).toBe(200);
    expect(page.body.map((c: any) => c.sha)).toEqual([sha.sources, sha.first]);
    expect(page.headers.get('x-total-count')).toBe('4');
    expect([page.headers.get('x-page'), page.headers.get('x-perpage'), page.headers.get('x-pagecount'), page.headers.get('x-hasmore'), page.headers.get('x-total')]).toEqual(['2', '2', '2', 'false', '4']);
    expect(page.headers.get('link')).toBe(
      `<${f().api}${repo}/commits?files=false&limit=2&page=1&stat=false&verification=false>; rel="first",<${f().api}${repo}/commits?files=false&limit=2&page=1&stat=false&verification=false>; rel="prev"`,
    );
    // A path pages by Gitea's fixed range (50) whatever the limit; headers still use the limit.
    const byPath = await f().request('GET', `${repo}/commits?path=src/tool.py&limit=1`, as('root'));
    expect(byPath.body.map((c: any) => c.sha)).toEqual([sha.modify, sha.sources]);
    expect([byPath.headers.get('x-total-count'), byPath.headers.get('x-hasmore')]).toEqual(['2', 'true']);
    const feature = await f().request('GET', `${repo}/commits?sha=feature&not=main&files=false`, as('root'));
    expect(feature.body.map((c: any) => c.sha)).toEqual([sha.feature]);
    const since = await f().request('GET', `${repo}/commits?since=2024-01-03T00:00:00Z&stat=false`, as('root'));
    expect(since.body.map((c: any) => c.sha)).toEqual([sha.main, sha.modify]);
    const capped = await f().request('GET', `${repo}/commits?limit=100`, as('root'));
    expect(capped.headers.get('x-perpage')).toBe('50');

    for (const [q, status, message] of [
      ['path=nope', 404, 'not found'],
      ['path=:(glob)**', 404, 'not found'],
      ['sha=nope', 404, 'object does not exist [id: nope, rel_path: ]'],
      ['since=bad', 422, "invalid 'since' format, expected ISO 8601 (RFC3339)"],
      ['until=2024-01-01', 422, "invalid 'until' format, expected ISO 8601 (RFC3339)"],
      ['sha=--all', 404, 'object does not exist [id: --all, rel_path: ]'],
      ['not=--output=/tmp/x', 404, 'object does not exist [id: --output=/tmp/x, rel_path: ]'],
    ] as const) {
      const r = await f().request('GET', `${repo}/commits?${q}`, as('root'));
      expect([q, r.status, r.body.message]).toEqual([q, status, message]);
    }
    const empty = await f().request('GET', '/repos/root/empty/commits', as('root'));
    expect([empty.status, empty.body.message]).toEqual([409, 'Git Repository is empty.']);
  });

  test('trees: entries, recursion, paging and truncation as Gitea; bad shas 400', async () => {
    const top = await f().request('GET', `${repo}/git/trees/main?per_page=3`, as('root'));
    expect(top.status).toBe(200);
    expect(top.headers.get('x-total-count')).toBe('8');
    expect(top.body).toMatchObject({ sha: sha.main, url: `${f().api}${repo}/git/trees/${sha.main}`, truncated: true, page: 1, total_count: 8 });
    expect(top.body.tree[2]).toEqual({ path: 'README.md', mode: '100644', type: 'blob', size: 14, sha: sha.readme, url: `${f().api}${repo}/git/blobs/${sha.readme}` });
    const all = await f().request('GET', `${repo}/git/trees/main?recursive=1&per_page=100`, as('root'));
    expect(all.body.total_count).toBe(13);
    expect(all.body.truncated).toBe(false);
    expect(all.body.tree.map((e: any) => `${e.mode} ${e.type} ${e.size} ${e.path}`)).toEqual([
      '100644 blob 81 .editorconfig',
      '100644 blob 1061 LICENSE',
      '100644 blob 14 README.md',
      '120000 blob 11 link.go',
      '100644 blob 10 mainwork.txt',
      '100755 blob 18 run.sh',
      '040000 tree 0 src',
      '100644 blob 20 src/app.ts',
      '100644 blob 45 src/main.go',
      '100644 blob 37 src/tool.py',
      '040000 tree 0 vendor',
      '040000 tree 0 vendor/lib',
      '100644 blob 18 vendor/lib/v.js',
    ]);
    const byTree = await f().request('GET', `${repo}/git/trees/${sha.tree}?page=2&per_page=7`, as('root'));
    expect(byTree.body).toMatchObject({ sha: sha.tree, page: 2, truncated: false });
    expect(byTree.body.tree.map((e: any) => e.path)).toEqual(['vendor']);
    const past = await f().request('GET', `${repo}/git/trees/main?page=5`, as('root'));
    expect(past.body).toMatchObject({ tree: null, truncated: false, page: 5, total_count: 8 });
    for (const bad of ['nope', '0000000000000000000000000000000000000000', sha.readme]) {
      const r = await f().request('GET', `${repo}/git/trees/${bad}`, as('root'));
      expect([r.status, r.body.message]).toEqual([400, `sha not found [${bad}]`]);
    }
  });

  test('blobs and annotated tags; bad shas 400 with Gitea messages', async () => {
    const blob = await f().request('GET', `${repo}/git/blobs/${sha.readme}`, as('root'));
    expect(blob.body).toEqual({ content: Buffer.from('# Sample\nmore\n').toString('base64'), encoding: 'base64', url: `${f().api}${repo}/git/blobs/${sha.readme}`, sha: sha.readme, size: 14 });
    const bad = await f().request('GET', `${repo}/git/blobs/nope`, as('root'));
    expect([bad.status, bad.body.message]).toEqual([400, 'length 4 has no matched object format: nope']);
    const missing = await f().request('GET', `${repo}/git/blobs/${'0'.repeat(40)}`, as('root'));
    expect([missing.status, missing.body.message]).toEqual([400, `object does not exist [id: ${'0'.repeat(40)}, rel_path: ]`]);

    const tag = await f().request('GET', `${repo}/git/tags/${sha.tag}`, as('root'));
    expect(tag.body).toEqual({
      tag: 'v1.0',
      sha: sha.tag,
      url: `${f().api}${repo}/git/tags/${sha.tag}`,
      message: 'version one\n',
      tagger: { name: 'Other Committer', email: 'other@example.com', date: '2024-01-06T00:00:00Z' },
      object: { type: 'commit', url: `${f().api}${repo}/git/commits/${sha.main}`, sha: sha.main },
      verification: { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' },
    });
    const byName = await f().request('GET', `${repo}/git/tags/v1.0`, as('root'));
    expect([byName.status, byName.body.message]).toEqual([400, 'length 4 has no matched object format: v1.0']);
    const notTag = await f().request('GET', `${repo}/git/tags/${sha.main}`, as('root'));
    expect([notTag.status, notTag.body.message]).toEqual([400, `object does not exist [id: ${sha.main}, rel_path: ]`]);
  });

  test('notes: the note and the notes commit that wrote it', async () => {
    const note = await f().request('GET', `${repo}/git/notes/main?files=false`, as('root'));
    expect(note.status).toBe(200);
    expect(note.body.message).toBe('a note on head\n');
    expect(note.body.commit.sha).toBe((await h.git('rev-parse', 'refs/notes/commits')).trim());
    expect(note.body.commit.commit.message).toBe("Notes added by 'git notes add'\n");
    expect(note.body.commit.files).toBeNull();
    expect(note.body.commit.stats).toEqual({ total: 1, additions: 1, deletions: 0 });
    const none = await f().request('GET', `${repo}/git/notes/feature`, as('root'));
    expect([none.status, none.body.message]).toEqual([404, "commit doesn't exist: feature"]);
    const bad = await f().request('GET', `${repo}/git/notes/nope`, as('root'));
    expect([bad.status, bad.body.message]).toEqual([404, 'object does not exist [id: nope, rel_path: ]']);
  });

  test('compare: commits of head not in base, diff and patch output, unknown refs 404', async () => {
    const cmp = await f().request('GET', `${repo}/compare/maint...main?files=false`, as('root'));
    expect(cmp.status).toBe(200);
    expect(cmp.body.total_commits).toBe(2);
    expect(cmp.body.commits.map((c: any) => c.sha)).toEqual([sha.main, sha.modify]);
    const suffix = await f().request('GET', `${repo}/compare/main~1...main^`, as('root'));
    expect(suffix.body.total_commits).toBe(0);
    const head = await f().request('GET', `${repo}/compare/feature`, as('root'));
    expect(head.body.commits.map((c: any) => c.sha)).toEqual([sha.feature]);
    const diff = await f().request('GET', `${repo}/compare/maint...main?output=diff`, as('root'));
    expect(diff.text).toBe(`${await h.git('diff', '-p', 'maint...main')}\n`);
    const missing = await f().request('GET', `${repo}/compare/maint...nope`, as('root'));
    expect([missing.status, missing.body.message]).toEqual([404, 'ref "nope" does not exist']);
  });

  test('languages, licenses and editorconfig of the default branch', async () => {
    const langs = await f().request('GET', `${repo}/languages`, as('root'));
    expect(langs.text).toBe('{"Go":56,"Python":37,"TypeScript":20,"Shell":18}');
    expect((await f().request('GET', `${repo}/licenses`, as('root'))).body).toEqual(['MIT']);
    expect((await f().request('GET', '/repos/root/empty/languages', as('root'))).body).toEqual({});
    expect((await f().request('GET', '/repos/root/empty/licenses', as('root'))).body).toEqual([]);
    expect((await f().request('GET', `${repo}/editorconfig/main.go`, as('root'))).body).toEqual({ indent_style: 'tab', indent_size: '2' });
    expect((await f().request('GET', `${repo}/editorconfig/README.md?ref=maint`, as('root'))).body).toEqual({ indent_style: 'space', indent_size: '2' });
  });

  test('a private repository is 404 for others; reads reuse one git object reader', async () => {
    for (const p of ['git/refs', 'commits', 'git/trees/main', 'languages', 'compare/main']) {
      expect((await f().request('GET', `/repos/root/hidden/${p}`, as('stranger'))).status).toBe(404);
    }
    const reader = f().app.services.gitReaders.reader(f().app.services.repos.diskPath('root', 'sample'));
    const before = reader.spawned;
    await Promise.all(Array.from({ length: 20 }, () => f().request('GET', `${repo}/git/trees/main?recursive=1`, as('root'))));
    await Promise.all(Array.from({ length: 20 }, () => f().request('GET', `${repo}/commits?limit=3`, as('root'))));
    expect(reader.spawned - before).toBeLessThanOrEqual(1);
  });

  test('commit e-mails at the no-reply domain name their user: {id}+anything by id, {name} by name', async () => {
    const hider = await f().user('hider');
    const domain = `noreply.${new URL(f().url).hostname}`;
    expect((await f().request('PATCH', '/user/settings', { ...as('hider'), body: { hide_email: true } })).status).toBe(200);
    expect((await f().request('POST', '/user/repos', { ...as('hider'), body: { name: 'own', auto_init: true } })).status).toBe(201);
    const own = await f().request('POST', '/repos/hider/own/contents/a.txt', { ...as('hider'), body: { content: 'aGk=', message: 'hidden' } });
    expect(own.status).toBe(201);
    expect(own.body.commit.author.email).toBe(`${hider.id}+hider@${domain}`);
    const emails = [`${hider.id}+someone@${domain}`, `HIDER@${domain.toUpperCase()}`, `999999+hider@${domain}`, `${hider.id}+hider@noreply.elsewhere`, `${hider.id}@${domain}`];
    for (const [i, email] of emails.entries()) {
      const body = { content: 'aGk=', message: `m${i}`, author: { name: 'x', email }, committer: { name: 'x', email }, ...(i ? { branch: 'noreply' } : { new_branch: 'noreply' }) };
      expect((await f().request('POST', `/repos/hider/own/contents/f${i}.txt`, { ...as('hider'), body })).status).toBe(201);
    }
    const list = await f().request('GET', '/repos/hider/own/commits?sha=noreply&limit=6&stat=false&files=false', as('stranger'));
    const logins = list.body.map((c: { author: { login: string } | null; committer: { login: string } | null }) => [c.author?.login ?? null, c.committer?.login ?? null]);
    expect(logins).toEqual([[null, null], [null, null], [null, null], ['hider', 'hider'], ['hider', 'hider'], ['hider', 'hider']]);
  });
});
