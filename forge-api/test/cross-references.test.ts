/**
 * Cross-references on the issue timeline as Gitea 1.27 writes them, on SQLite and PostgreSQL,
 * with real git pushes: issue_ref / comment_ref / pull_ref entries from titles, bodies and
 * comments (code left out, one entry per issue, neutered once the text no longer names it),
 * only for issues the doer may read and shown only to viewers who may read the mentioning
 * repository; a pull request's "fixes #N" closes the issue when merged; a pushed commit gives a
 * commit_ref, and its "Fixes #N" closes the issue once on the default branch (tracking an `@1h30m` after it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import execa from 'execa';
import { gitEnv } from '../src/services/git/run';
import { describeForge, PASSWORD } from './support/forge';

interface Entry {
  type: string;
  body: string;
  user: { login: string };
  ref_issue: { number: number; title: string; repository: { full_name: string } } | null;
  ref_comment: { id: number; body: string; html_url: string } | null;
  ref_action: string;
  ref_commit_sha: string;
}

describeForge('cross-references', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const a = '/repos/alice/app';
  let work: string;
  const git = async (cwd: string, ...args: string[]) => {
    const r = await execa('git', args, {
      cwd,
      extendEnv: false,
      reject: false,
      env: gitEnv({ GIT_AUTHOR_NAME: 'Alice', GIT_AUTHOR_EMAIL: 'alice@example.com', GIT_COMMITTER_NAME: 'Alice', GIT_COMMITTER_EMAIL: 'alice@example.com' }),
    });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const refs = async (index: number, viewer = 'alice', repo = a) =>
    (((await f().request('GET', `${repo}/issues/${index}/timeline`, as(viewer))).body as (Entry | null)[] | null) ?? []).filter((e): e is Entry => !!e && e.type.endsWith('_ref'));
  const state = async (index: number) => (await f().request('GET', `${a}/issues/${index}`, as('alice'))).body.state as string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-xref-'));
    for (const u of ['alice', 'bob']) await f().user(u);
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'app', auto_init: true, default_branch: 'main' } });
    await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'secret', private: true } });
    await f().request('POST', '/user/repos', { ...as('bob'), body: { name: 'tool' } });
    for (let i = 1; i <= 5; i++) await f().request('POST', `${a}/issues`, { ...as('alice'), body: { title: `target ${i}` } });
    await f().request('POST', '/repos/alice/secret/issues', { ...as('alice'), body: { title: 'hidden' } });
  });
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('a title, a body and a comment reference an issue once each; code does not count; editing the comment neuters its reference', async () => {
    const issue = await f().request('POST', `${a}/issues`, { ...as('alice'), body: { title: 'about #1', body: 'see #1 and `#2`, also (alice/app#1).\n\n```\n#3\n```' } });
    expect(issue.status).toBe(201);
    const comment = await f().request('POST', `${a}/issues/${issue.body.number}/comments`, { ...as('alice'), body: { body: 'fixes #1.' } });
    let one = await refs(1);
    expect(one.map((e) => [e.type, e.ref_issue?.number, e.ref_action, e.ref_comment?.id ?? null])).toEqual([
      ['issue_ref', issue.body.number, 'none', null],
      // From an issue a keyword does nothing.
      ['comment_ref', issue.body.number, 'none', comment.body.id],
    ]);
    expect(one[1].ref_comment).toMatchObject({ body: 'fixes #1.', html_url: `${f().url}/alice/app/issues/${issue.body.number}#issuecomment-${comment.body.id}` });
    expect(one[0]).toMatchObject({ body: '', ref_commit_sha: '', user: { login: 'alice' }, ref_issue: { title: 'about #1', repository: { full_name: 'alice/app' } } });
    expect(await refs(2)).toEqual([]);
    expect(await refs(3)).toEqual([]);
    // The issue's comment count is unchanged by references.
    expect((await f().request('GET', `${a}/issues/1`, as('alice'))).body.comments).toBe(0);

    await f().request('PATCH', `${a}/issues/comments/${comment.body.id}`, { ...as('alice'), body: { body: 'nothing to see' } });
    one = await refs(1);
    expect(one.map((e) => e.ref_action)).toEqual(['none', 'neutered']);
  });

  test('only issues the doer may read are referenced, and a viewer sees only references from repositories they may read', async () => {
    // bob cannot read alice/secret: his mention of it is dropped.
    await f().request('POST', '/repos/bob/tool/issues', { ...as('bob'), body: { title: 'x', body: 'like alice/secret#1 and alice/app#4' } });
    expect(await refs(1, 'alice', '/repos/alice/secret')).toEqual([]);
    expect((await refs(4)).map((e) => e.ref_issue?.repository.full_name)).toEqual(['bob/tool']);
    // alice mentions alice/app#4 from her private repository: she sees it, bob does not.
    await f().request('POST', '/repos/alice/secret/issues', { ...as('alice'), body: { title: 'y', body: 'for alice/app#4' } });
    expect((await refs(4, 'alice')).map((e) => e.ref_issue?.repository.full_name)).toEqual(['bob/tool', 'alice/secret']);
    expect((await refs(4, 'bob')).map((e) => e.ref_issue?.repository.full_name)).toEqual(['bob/tool']);
  });

  test('pushed commits: commit_ref on any branch; "Fixes #N" closes only from the default branch; a merged "fixes #N" pull request closes', async () => {
    const dir = path.join(work, 'app');
    const url = new URL(`${f().url}/alice/app.git`);
    url.username = 'alice';
    url.password = PASSWORD;
    await git(work, 'clone', '-q', url.toString(), dir);
    await git(dir, 'checkout', '-q', '-b', 'topic');
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'Fixes #2 <soon>', '-m', 'body');
    const onBranch = await git(dir, 'rev-parse', 'HEAD');
    await git(dir, 'push', '-q', 'origin', 'topic');
    let two = await refs(2);
    expect(two.map((e) => [e.type, e.ref_commit_sha, e.body, e.ref_issue])).toEqual([
      ['commit_ref', onBranch, `<a href="/alice/app/commit/${onBranch}">Fixes #2 &lt;soon&gt;</a>`, null],
    ]);
    expect(await state(2)).toBe('open');

    // The same commit reaching main closes #2 (no second commit_ref for it).
    await git(dir, 'push', '-q', 'origin', 'topic:main');
    two = await refs(2);
    expect(two).toHaveLength(1);
    expect(await state(2)).toBe('closed');
    const closes = ((await f().request('GET', `${a}/issues/2/timeline`, as('alice'))).body as Entry[]).filter((e) => e.type === 'close');
    expect(closes.map((e) => e.user.login)).toEqual(['alice']);
    // A time after the reference is tracked on the issue it closes.
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'Closes #3 @1h30m');
    await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    expect(await state(3)).toBe('closed');
    const times = (await f().request('GET', `${a}/issues/3/times`, as('alice'))).body as { time: number; user_name: string }[];
    expect(times.map((t) => [t.time, t.user_name])).toEqual([[5400, 'alice']]);

    // A pull request whose body says "fixes #5" closes it when merged.
    await git(dir, 'checkout', '-q', '-b', 'feature');
    fs.writeFileSync(path.join(dir, 'f.txt'), 'x\n');
    await git(dir, 'add', 'f.txt');
    await git(dir, 'commit', '-q', '-m', 'A feature');
    await git(dir, 'push', '-q', 'origin', 'feature');
    const pr = await f().request('POST', `${a}/pulls`, { ...as('alice'), body: { head: 'feature', base: 'main', title: 'Feature', body: 'Fixes #5' } });
    expect(pr.status).toBe(201);
    expect((await refs(5)).map((e) => [e.type, e.ref_issue?.number, e.ref_action])).toEqual([['pull_ref', pr.body.number, 'closes']]);
    expect(await state(5)).toBe('open');
    for (let i = 0; i < 100; i++) {
      if ((await f().request('GET', `${a}/pulls/${pr.body.number}`, as('alice'))).body.mergeable) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await f().request('POST', `${a}/pulls/${pr.body.number}/merge`, { ...as('alice'), body: { Do: 'merge' } })).status).toBe(200);
    expect(await state(5)).toBe('closed');
  });

  test("a review's body, its line comments (a pending review's too) and replies reference issues; a review's keyword closes at the merge", async () => {
    const n: number[] = [];
    for (const title of ['by body', 'by line', 'by pending line', 'by reply']) n.push((await f().request('POST', `${a}/issues`, { ...as('alice'), body: { title } })).body.number);
    const file = { content: Buffer.from('one\ntwo\n').toString('base64'), message: 'r', branch: 'main', new_branch: 'reviewed' };
    expect((await f().request('POST', `${a}/contents/r.txt`, { ...as('alice'), body: file })).status).toBe(201);
    const pr = (await f().request('POST', `${a}/pulls`, { ...as('alice'), body: { head: 'reviewed', base: 'main', title: 'Reviewed' } })).body.number;
    const review = await f().request('POST', `${a}/pulls/${pr}/reviews`, {
      ...as('alice'),
      body: { event: 'COMMENT', body: `closes #${n[0]}`, comments: [{ path: 'r.txt', new_position: 1, body: `see #${n[1]}` }] },
    });
    expect(review.status).toBe(200);
    const pending = { event: 'PENDING', body: 'later', comments: [{ path: 'r.txt', new_position: 2, body: `see #${n[2]}` }] };
    expect((await f().request('POST', `${a}/pulls/${pr}/reviews`, { ...as('alice'), body: pending })).status).toBe(200);
    const line = (await f().request('GET', `${a}/pulls/${pr}/reviews/${review.body.id}/comments`, as('alice'))).body[0];
    expect((await f().request('POST', `${a}/pulls/${pr}/comments/${line.id}/replies`, { ...as('alice'), body: { body: `as #${n[3]} says` } })).status).toBe(201);
    const seen = await Promise.all(n.map(async (i) => (await refs(i)).map((e) => [e.type, e.ref_issue?.number, e.ref_action, e.ref_comment?.body])));
    expect(seen).toEqual([
      [['comment_ref', pr, 'closes', `closes #${n[0]}`]],
      [['comment_ref', pr, 'none', `see #${n[1]}`]],
      [['comment_ref', pr, 'none', `see #${n[2]}`]],
      [['comment_ref', pr, 'none', `as #${n[3]} says`]],
    ]);
    for (let i = 0; i < 100 && !(await f().request('GET', `${a}/pulls/${pr}`, as('alice'))).body.mergeable; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await f().request('POST', `${a}/pulls/${pr}/merge`, { ...as('alice'), body: { Do: 'merge' } })).status).toBe(200);
    expect(await state(n[0])).toBe('closed');
    expect(await state(n[1])).toBe('open');
  });

  test("deleting a review or a comment keeps its references: still counted, a keyword still closes at the merge, shown as null entries as Gitea does", async () => {
    const n: number[] = [];
    for (const title of ['by deleted body', 'by deleted line', 'by deleted comment']) n.push((await f().request('POST', `${a}/issues`, { ...as('alice'), body: { title } })).body.number);
    const file = { content: Buffer.from('one\n').toString('base64'), message: 'd', branch: 'main', new_branch: 'deleted-review' };
    expect((await f().request('POST', `${a}/contents/d.txt`, { ...as('alice'), body: file })).status).toBe(201);
    const pr = (await f().request('POST', `${a}/pulls`, { ...as('alice'), body: { head: 'deleted-review', base: 'main', title: 'Deleted review' } })).body.number;
    const review = await f().request('POST', `${a}/pulls/${pr}/reviews`, {
      ...as('alice'),
      body: { event: 'COMMENT', body: `closes #${n[0]}`, comments: [{ path: 'd.txt', new_position: 1, body: `see #${n[1]}` }] },
    });
    expect(review.status).toBe(200);
    const comment = await f().request('POST', `${a}/issues/${pr}/comments`, { ...as('alice'), body: { body: `and #${n[2]}` } });
    expect((await refs(n[2])).map((e) => e.ref_comment?.body)).toEqual([`and #${n[2]}`]);
    expect((await f().request('DELETE', `${a}/pulls/${pr}/reviews/${review.body.id}`, as('alice'))).status).toBe(204);
    expect((await f().request('DELETE', `${a}/issues/comments/${comment.body.id}`, as('alice'))).status).toBe(204);
    for (const i of n) {
      const timeline = await f().request('GET', `${a}/issues/${i}/timeline`, as('alice'));
      // Gitea keeps the entry but cannot render a reference whose comment is gone: `null`, counted.
      expect([timeline.body, timeline.headers.get('x-total-count')]).toEqual([[null], '1']);
    }
    for (let i = 0; i < 100 && !(await f().request('GET', `${a}/pulls/${pr}`, as('alice'))).body.mergeable; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await f().request('POST', `${a}/pulls/${pr}/merge`, { ...as('alice'), body: { Do: 'merge' } })).status).toBe(200);
    // The deleted review's "closes" still closes, as in Gitea.
    expect(await state(n[0])).toBe('closed');
    expect(await state(n[1])).toBe('open');
  });
});
