/**
 * Gitea's own JS client (gitea-js) manages branches, tags and their protections on the forge;
 * the real git client then meets the protections: a push to a protected branch is refused with
 * Gitea's message, so are a force push and a deletion; an allow-listed user gets through.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaApi } from 'gitea-js';
import { git } from '../forge-api/test/support/git';
import { describeForge, PASSWORD } from '../forge-api/test/support/forge';

describeForge('gitea-js: branches, tags and protections; git push meets them', (f) => {
  let owner: ReturnType<typeof giteaApi>;
  let work: string;
  const remote = (user: string) => {
    const u = new URL(`${f().url}/shopco/shop.git`);
    u.username = user;
    u.password = PASSWORD;
    return u.toString();
  };
  const serverSays = (stderr: string) =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('remote: error: '))
      .map((l) => l.slice('remote: error: '.length).trim())
      .filter(Boolean);

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-branches-gitea-js-'));
    await f().user('fay');
    await f().user('gus');
    await f().user('hal');
    owner = giteaApi(f().url, { token: await f().token('fay', ['write:repository', 'write:user', 'write:organization']) });
    await owner.orgs.orgCreate({ username: 'shopco' });
    await owner.orgs.createOrgRepo('shopco', { name: 'shop', auto_init: true, default_branch: 'main' });
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('branches and tags through gitea-js', async () => {
    const created = await owner.repos.repoCreateBranch('shopco', 'shop', { new_branch_name: 'feature/cart' });
    expect(created.status).toBe(201);
    expect(created.data.name).toBe('feature/cart');
    const listed = await owner.repos.repoListBranches('shopco', 'shop');
    expect(listed.data.map((b) => b.name).sort()).toEqual(['feature/cart', 'main']);
    expect((await owner.repos.repoGetBranch('shopco', 'shop', 'feature/cart')).data.commit?.id).toBe(created.data.commit?.id);
    // gitea-js calls the rename "update" (PATCH with a new name)
    expect((await owner.repos.repoUpdateBranch('shopco', 'shop', 'feature/cart', { name: 'feature/basket' })).status).toBe(204);
    await expect(owner.repos.repoGetBranch('shopco', 'shop', 'feature/cart')).rejects.toMatchObject({ status: 404 });
    expect((await owner.repos.repoDeleteBranch('shopco', 'shop', 'feature/basket')).status).toBe(204);
    await expect(owner.repos.repoDeleteBranch('shopco', 'shop', 'main')).rejects.toMatchObject({ status: 403 });

    const tag = await owner.repos.repoCreateTag('shopco', 'shop', { tag_name: 'v1', message: 'first' });
    expect(tag.status).toBe(201);
    expect(tag.data.message).toBe('first\n');
    expect((await owner.repos.repoListTags('shopco', 'shop')).data.map((t) => t.name)).toEqual(['v1']);
    expect((await owner.repos.repoGetTag('shopco', 'shop', 'v1')).data.commit?.sha).toBe(created.data.commit?.id);
    expect((await owner.repos.repoDeleteTag('shopco', 'shop', 'v1')).status).toBe(204);
  });

  test('protections through gitea-js, enforced on git push', async () => {
    // gus and hal may write (team "devs"); only hal is on main's push allow-list.
    const team = await f().request('POST', '/orgs/shopco/teams', { basic: ['fay', PASSWORD], body: { name: 'devs', permission: 'write', units: ['repo.code'] } });
    expect(team.status).toBe(201);
    for (const u of ['gus', 'hal']) expect((await f().request('PUT', `/teams/${team.body.id}/members/${u}`, { basic: ['fay', PASSWORD] })).status).toBe(204);
    expect((await f().request('PUT', `/teams/${team.body.id}/repos/shopco/shop`, { basic: ['fay', PASSWORD] })).status).toBe(204);
    const rule = await owner.repos.repoCreateBranchProtection('shopco', 'shop', { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['hal'] });
    expect(rule.status).toBe(201);
    expect(rule.data.push_whitelist_usernames).toEqual(['hal']);
    expect((await owner.repos.repoListBranchProtection('shopco', 'shop')).data.map((r) => r.rule_name)).toEqual(['main']);
    expect((await owner.repos.repoGetBranch('shopco', 'shop', 'main')).data.protected).toBe(true);

    const gus = path.join(work, 'gus');
    expect((await git(work, 'clone', '-q', remote('gus'), gus)).exitCode).toBe(0);
    fs.writeFileSync(path.join(gus, 'gus.txt'), 'gus\n');
    await git(gus, 'add', '.');
    await git(gus, 'commit', '-q', '-m', 'gus was here');
    const refused = await git(gus, 'push', 'origin', 'main');
    expect(refused.exitCode).not.toBe(0);
    expect(serverSays(refused.stderr)).toEqual(['Not allowed to push to protected branch main']);

    const hal = path.join(work, 'hal');
    expect((await git(work, 'clone', '-q', remote('hal'), hal)).exitCode).toBe(0);
    fs.writeFileSync(path.join(hal, 'hal.txt'), 'hal\n');
    await git(hal, 'add', '.');
    await git(hal, 'commit', '-q', '-m', 'hal was here');
    expect((await git(hal, 'push', 'origin', 'main')).exitCode).toBe(0);

    await git(hal, 'commit', '-q', '--amend', '-m', 'hal rewrote history');
    const forced = await git(hal, 'push', '--force', 'origin', 'main');
    expect(forced.exitCode).not.toBe(0);
    expect(serverSays(forced.stderr)).toEqual(['branch main is protected from force push']);

    const deleted = await git(hal, 'push', 'origin', ':main');
    expect(serverSays(deleted.stderr)).toEqual(['branch main is the default branch and cannot be deleted']);

    const tagRule = await owner.repos.repoCreateTagProtection('shopco', 'shop', { name_pattern: 'v*', whitelist_usernames: ['hal'] });
    expect(tagRule.status).toBe(201);
    await git(gus, 'tag', 'v2');
    const tagRefused = await git(gus, 'push', 'origin', 'v2');
    expect(serverSays(tagRefused.stderr)).toEqual(['Tag v2 is protected']);

    expect((await owner.repos.repoDeleteBranchProtection('shopco', 'shop', 'main')).status).toBe(204);
    await git(gus, 'pull', '-q', '--rebase', 'origin', 'main');
    expect((await git(gus, 'push', 'origin', 'main')).exitCode).toBe(0);
  });
});
