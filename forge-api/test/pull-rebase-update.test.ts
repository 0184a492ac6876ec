/**
 * The rebase merge styles and POST /pulls/{index}/update on real git, SQLite and PostgreSQL:
 * `rebase` replays the head's commits onto the base (authors kept, committed by the merger,
 * linear history), `rebase-merge` adds a merge commit of the old base and the rebased head,
 * conflicts are 409; update by merge (Gitea's "Merge branch 'base' into head") and by rebase,
 * Gitea's refusals, and a push racing nothing is lost.
 */
import path from 'node:path';
import { describeForge, PASSWORD } from './support/forge';
import { git } from './support/git';

describeForge('pull rebase and update', (f) => {
  const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const R = '/repos/alice/proj';
  const disk = () => path.join(f().dataDir, 'repositories', 'alice', 'proj.git');
  const out = async (...args: string[]) => (await git(disk(), ...args)).stdout.trim();
  const settle = () => f().app.services.pulls.checker.idle();
  /** A commit by `who` through the contents API: `file` with `text` on `branch` (new from `from`). */
  const write = async (who: string, file: string, text: string, branch: string, from?: string) => {
    const cur = await f().request('GET', `${R}/contents/${file}?ref=${from ?? branch}`, as(who));
    const body = { content: b64(text), message: `${who}: ${file}`, ...(from ? { branch: from, new_branch: branch } : { branch }), ...(cur.status === 200 ? { sha: cur.body.sha } : {}) };
    const res = await f().request(cur.status === 200 ? 'PUT' : 'POST', `${R}/contents/${file}`, { ...as(who), body });
    expect(res.status).toBe(cur.status === 200 ? 200 : 201);
    return res.body.commit.sha as string;
  };
  /** A branch of bob's two commits from main, main moved on after, and a pull request of it. */
  const diverged = async (name: string) => {
    await write('bob', `${name}-1.txt`, 'one\n', name, 'main');
    await write('bob', `${name}-2.txt`, 'two\n', name);
    await write('alice', `${name}-main.txt`, 'main\n', 'main');
    const pr = await f().request('POST', `${R}/pulls`, { ...as('bob'), body: { head: name, base: 'main', title: `PR ${name}` } });
    expect(pr.status).toBe(201);
    await settle();
    return pr.body.number as number;
  };

  beforeAll(async () => {
    for (const u of ['alice', 'bob', 'carl']) await f().user(u);
    expect((await f().request('POST', '/user/repos', { ...as('alice'), body: { name: 'proj', auto_init: true } })).status).toBe(201);
    expect((await f().request('PUT', `${R}/collaborators/bob`, { ...as('alice'), body: { permission: 'write' } })).status).toBe(204);
  });

  test('rebase: the head commits replayed on the base, authors kept, committed by the merger, base moved to them (linear)', async () => {
    const n = await diverged('reb');
    const mainBefore = await out('rev-parse', 'main');
    const res = await f().request('POST', `${R}/pulls/${n}/merge`, { ...as('alice'), body: { Do: 'rebase' } });
    expect(res.status).toBe(200);
    const log = (await out('log', '--format=%s|%an|%cn|%P', `${mainBefore}..main`)).split('\n');
    expect(log.map((l) => l.split('|').slice(0, 3).join('|'))).toEqual(['bob: reb-2.txt|bob|alice', 'bob: reb-1.txt|bob|alice']);
    expect(log.every((l) => l.split('|')[3].split(' ').length === 1)).toBe(true);
    expect(await out('rev-parse', 'main~2')).toBe(mainBefore);
    const pr = (await f().request('GET', `${R}/pulls/${n}`)).body;
    expect([pr.merged, pr.merge_commit_sha]).toEqual([true, await out('rev-parse', 'main')]);
  });

  test('rebase-merge: a merge commit whose parents are the old base and the rebased head', async () => {
    const n = await diverged('rm');
    const mainBefore = await out('rev-parse', 'main');
    const res = await f().request('POST', `${R}/pulls/${n}/merge`, { ...as('alice'), body: { Do: 'rebase-merge', merge_message_field: 'body' } });
    expect(res.status).toBe(200);
    const [first, second] = (await out('log', '-1', '--format=%P', 'main')).split(' ');
    expect(first).toBe(mainBefore);
    expect(await out('rev-parse', `${second}~2`)).toBe(mainBefore);
    expect(await out('log', '-1', '--format=%B', 'main')).toBe(`Merge pull request 'PR rm' (#${n}) from rm into main\n\nbody`);
    expect(await out('log', '--format=%an', `${mainBefore}..${second}`)).toBe('bob\nbob');
  });

  test("conflicts found by the merge itself: 409 with Gitea's error value (style, git's output, the commit a rebase stopped at); nothing moves", async () => {
    await write('alice', 'clash.txt', 'one\n', 'main');
    // bob changes the line and changes it back: merging is clean, replaying his first commit is not.
    const stopper = await write('bob', 'clash.txt', 'bob\n', 'clash', 'main');
    await write('bob', 'clash.txt', 'one\n', 'clash');
    await write('bob', 'other.txt', 'x\n', 'clash');
    await write('alice', 'clash.txt', 'alice\n', 'main');
    const pr = await f().request('POST', `${R}/pulls`, { ...as('bob'), body: { head: 'clash', base: 'main', title: 'clash' } });
    await settle();
    expect((await f().request('GET', `${R}/pulls/${pr.body.number}`)).body.mergeable).toBe(true);
    const main = await out('rev-parse', 'main');
    const res = await f().request('POST', `${R}/pulls/${pr.body.number}/merge`, { ...as('alice'), body: { Do: 'rebase' } });
    expect([res.status, Object.keys(res.body)]).toEqual([409, ['Style', 'CommitSHA', 'StdOut', 'StdErr', 'Err']]);
    expect([res.body.Style, res.body.CommitSHA, res.body.StdOut, res.body.Err]).toEqual(['rebase', stopper, 'Auto-merging clash.txt\nCONFLICT (content): Merge conflict in clash.txt\n', {}]);
    expect(res.body.StdErr).toContain(`error: could not apply ${stopper.slice(0, 7)}... bob: clash.txt\n`);
    expect(await out('rev-parse', 'main')).toBe(main);
    // A conflicting merge the checker did not see (the base moved after its check): Gitea's ErrMergeConflicts.
    await write('bob', 'both.txt', 'bob\n', 'clash2', 'main');
    await write('alice', 'both.txt', 'alice\n', 'main');
    const pr2 = await f().request('POST', `${R}/pulls`, { ...as('bob'), body: { head: 'clash2', base: 'main', title: 'clash2' } });
    await settle();
    await f().app.prisma.pullRequest.updateMany({ where: { index: pr2.body.number }, data: { status: 2 } });
    const main2 = await out('rev-parse', 'main');
    const res2 = await f().request('POST', `${R}/pulls/${pr2.body.number}/merge`, { ...as('alice'), body: { Do: 'squash' } });
    expect([res2.status, res2.body]).toEqual([
      409,
      { Style: 'squash', StdOut: 'Auto-merging both.txt\nCONFLICT (add/add): Merge conflict in both.txt\nSquash commit -- not updating HEAD\nAutomatic merge failed; fix conflicts and then commit the result.\n', StdErr: '', Err: {} },
    ]);
    expect(await out('rev-parse', 'main')).toBe(main2);
  });

  test("update by merge: Gitea's merge commit of the base into the head branch; the pull request is no longer behind", async () => {
    const n = await diverged('upm');
    const headBefore = await out('rev-parse', 'upm');
    const res = await f().request('POST', `${R}/pulls/${n}/update`, as('bob'));
    expect(res.status).toBe(200);
    expect(await out('log', '-1', '--format=%s|%P', 'upm')).toBe(`Merge branch 'main' into upm|${headBefore} ${await out('rev-parse', 'main')}`);
    await settle();
    expect(await out('rev-parse', `refs/pull/${n}/head`)).toBe(await out('rev-parse', 'upm'));
    const row = await f().app.prisma.pullRequest.findFirst({ where: { index: n } });
    expect(row!.commitsBehind).toBe(0);
    // Again, with nothing of the base missing: Gitea's text, as a 409 where Gitea answers 500.
    const again = await f().request('POST', `${R}/pulls/${n}/update`, as('bob'));
    expect([again.status, again.body.message]).toEqual([409, `HeadBranch of PR ${n} is up to date`]);
  });

  test('update by rebase: the head branch replayed onto the base; refusals: outsiders 403, merged 422, unknown 404', async () => {
    const n = await diverged('upr');
    const main = await out('rev-parse', 'main');
    const refused = await f().request('POST', `${R}/pulls/${n}/update?style=rebase`, as('carl'));
    expect([refused.status, refused.text]).toEqual([403, '']);
    const res = await f().request('POST', `${R}/pulls/${n}/update?style=rebase`, as('bob'));
    expect(res.status).toBe(200);
    expect(await out('rev-parse', 'upr~2')).toBe(main);
    expect(await out('log', '--format=%s', `${main}..upr`)).toBe('bob: upr-2.txt\nbob: upr-1.txt');
    expect((await f().request('POST', `${R}/pulls/1/update`, as('alice'))).body.message).toBe('pull request is already merged');
    expect((await f().request('POST', `${R}/pulls/1/update`, as('alice'))).status).toBe(422);
    expect((await f().request('POST', `${R}/pulls/999/update`, as('alice'))).status).toBe(404);
    expect((await f().request('POST', `${R}/pulls/${n}/update?style=squash`, as('bob'))).status).toBe(422);
  });
});
