/**
 * The people side of the user API as Gitea 1.27.3 answers it, on SQLite and PostgreSQL:
 * followers and following (lists, check, follow, unfollow, counters), blocks (list, check, block
 * with a note, unblock) enforced from the blocked user's side, e-mail addresses, settings,
 * watched repositories, the heatmap and the user and organization activity feeds, with private
 * repositories and private users kept out of every list.
 */
import { describeForge } from './support/forge';
import { as, okRequester } from './support/requests';

describeForge('users: follows, blocks, emails, settings, subscriptions, activity', (f) => {
  const logins = (res: { body: { login: string }[] }) => res.body.map((u) => u.login);
  const ok = okRequester(f);

  beforeAll(async () => {
    await f().user('root', { admin: true });
    for (const u of ['ann', 'ben', 'cat', 'dan', 'eve']) await f().user(u);
    await f().user('hermit', { visibility: 'private' });
    await ok('POST', '/user/repos', 'ann', { name: 'garden' });
    await ok('POST', '/user/repos', 'ann', { name: 'vault', private: true });
    await ok('POST', '/user/repos', 'cat', { name: 'shared' });
  });

  describe('followers and following', () => {
    test('follow, check, lists with counters, paging and visibility; unfollow', async () => {
      expect((await f().request('GET', '/user/following/ann', as('ben'))).status).toBe(404);
      let res = await f().request('PUT', '/user/following/ann', as('ben'));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      // Twice is one follow; following yourself changes nothing.
      expect((await f().request('PUT', '/user/following/ann', as('ben'))).status).toBe(204);
      expect((await f().request('PUT', '/user/following/ben', as('ben'))).status).toBe(204);
      for (const u of ['cat', 'hermit']) expect((await f().request('PUT', '/user/following/ann', as(u))).status).toBe(204);
      expect((await f().request('GET', '/user/following/ann', as('ben'))).status).toBe(204);
      expect((await f().request('GET', '/users/ben/following/ann', as('dan'))).status).toBe(204);
      expect((await f().request('GET', '/users/dan/following/ann', as('ben'))).status).toBe(404);
      expect((await f().request('GET', '/users/ben/following/nobody', as('ben'))).status).toBe(404);

      const ann = (await f().request('GET', '/users/ann', as('dan'))).body;
      expect(ann.followers_count).toBe(3);
      expect((await f().request('GET', '/users/ben', as('dan'))).body.following_count).toBe(1);

      // A private user is listed only for those who may see them (site admins, themselves, whom they follow).
      res = await f().request('GET', '/users/ann/followers', as('dan'));
      expect(res.status).toBe(200);
      expect(logins(res)).toEqual(['ben', 'cat']);
      expect(res.headers.get('x-total-count')).toBe('2');
      expect(logins(await f().request('GET', '/user/followers', as('ann')))).toEqual(['ben', 'cat', 'hermit']);
      expect(logins(await f().request('GET', '/users/ann/followers', as('root')))).toEqual(['ben', 'cat', 'hermit']);
      res = await f().request('GET', '/users/ann/followers?limit=1&page=1', as('ann'));
      expect(res.body).toHaveLength(1);
      expect(res.headers.get('x-total-count')).toBe('3');
      expect(res.headers.get('link')).toContain('rel="next"');
      expect(logins(await f().request('GET', '/user/following', as('ben')))).toEqual(['ann']);
      expect(logins(await f().request('GET', '/users/cat/following', as('ben')))).toEqual(['ann']);

      expect((await f().request('DELETE', '/user/following/ann', as('hermit'))).status).toBe(204);
      expect((await f().request('DELETE', '/user/following/ann', as('hermit'))).status).toBe(204);
      expect((await f().request('GET', '/users/ann', as('ann'))).body.followers_count).toBe(2);
      expect((await f().request('GET', '/users/hermit', as('hermit'))).body.following_count).toBe(0);
    });

    test('a token is required; a private user is 404 to others; a read-only user token cannot follow', async () => {
      expect((await f().request('GET', '/users/ann/followers')).status).toBe(401);
      expect((await f().request('PUT', '/user/following/ann')).status).toBe(401);
      expect((await f().request('PUT', '/user/following/hermit', as('dan'))).status).toBe(404);
      expect((await f().request('GET', '/users/hermit/followers', as('dan'))).status).toBe(404);
      const token = await f().token('dan', ['read:user']);
      expect((await f().request('GET', '/users/ann/followers', { token })).status).toBe(200);
      expect((await f().request('PUT', '/user/following/ann', { token })).status).toBe(403);
    });
  });

  describe('blocks', () => {
    beforeAll(async () => {
      // eve follows ann, stars and watches garden, and collaborates on it; ann follows eve.
      await ok('PUT', '/user/following/ann', 'eve');
      await ok('PUT', '/user/following/eve', 'ann');
      await ok('PUT', '/user/starred/ann/garden', 'eve');
      await ok('PUT', '/repos/ann/garden/subscription', 'eve');
      await ok('PUT', '/repos/ann/garden/collaborators/eve', 'ann', { permission: 'write' });
      await ok('POST', '/repos/ann/garden/issues', 'ann', { title: 'weeds', assignees: ['eve'] });
    });

    test('block with a note removes follows, stars, watches, assignments and collaboration both ways', async () => {
      const before = (await f().request('GET', '/repos/ann/garden', as('ann'))).body;
      expect(before.stars_count).toBe(1);
      const res = await f().request('PUT', '/user/blocks/eve?note=spam', as('ann'));
      expect(res.status).toBe(204);
      expect((await f().request('GET', '/user/blocks/eve', as('ann'))).status).toBe(204);
      expect((await f().request('GET', '/user/blocks/ben', as('ann'))).status).toBe(404);
      const list = await f().request('GET', '/user/blocks', as('ann'));
      expect(logins(list)).toEqual(['eve']);
      expect(list.headers.get('x-total-count')).toBe('1');

      expect((await f().request('GET', '/user/following/ann', as('eve'))).status).toBe(404);
      expect((await f().request('GET', '/user/following/eve', as('ann'))).status).toBe(404);
      const after = (await f().request('GET', '/repos/ann/garden', as('ann'))).body;
      expect(after.stars_count).toBe(0);
      expect(after.watchers_count).toBe(before.watchers_count - 1);
      expect((await f().request('GET', '/users/eve', as('eve'))).body).toMatchObject({ following_count: 0, followers_count: 0, starred_repos_count: 0 });
      expect((await f().request('GET', '/repos/ann/garden/collaborators/eve', as('ann'))).status).toBe(404);
      expect((await f().request('GET', '/repos/ann/garden/issues/1', as('ann'))).body.assignees).toBeNull();
    });

    test("the blocked user cannot follow, star, watch, open issues or comment in the blocker's repositories", async () => {
      const refused = { message: 'user is blocked' };
      let res = await f().request('PUT', '/user/following/ann', as('eve'));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(refused);
      // Nor may the blocker follow the one they blocked.
      expect((await f().request('PUT', '/user/following/eve', as('ann'))).status).toBe(403);
      res = await f().request('PUT', '/user/starred/ann/garden', as('eve'));
      expect(res.status).toBe(403);
      expect((await f().request('PUT', '/repos/ann/garden/subscription', as('eve'))).status).toBe(403);
      res = await f().request('POST', '/repos/ann/garden/issues', { ...as('eve'), body: { title: 'let me in' } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(refused);
      res = await f().request('POST', '/repos/ann/garden/issues/1/comments', { ...as('eve'), body: { body: 'hello?' } });
      expect(res.status).toBe(403);
      // In someone else's repository: no comment on the blocker's issue, no assigning the blocker.
      await ok('PUT', '/repos/cat/shared/collaborators/eve', 'cat', { permission: 'write' });
      await ok('PUT', '/repos/cat/shared/collaborators/ann', 'cat', { permission: 'write' });
      const issue = (await ok('POST', '/repos/cat/shared/issues', 'ann', { title: 'by ann' })).body;
      expect((await f().request('POST', `/repos/cat/shared/issues/${issue.number}/comments`, { ...as('eve'), body: { body: 'hi' } })).status).toBe(403);
      expect((await f().request('POST', '/repos/cat/shared/issues', { ...as('eve'), body: { title: 'for ann', assignees: ['ann'] } })).status).toBe(403);
      // Others are not affected.
      expect((await f().request('POST', `/repos/cat/shared/issues/${issue.number}/comments`, { ...as('cat'), body: { body: 'fine' } })).status).toBe(201);
      // The blocked user can no longer be made a collaborator.
      expect((await f().request('PUT', '/repos/ann/garden/collaborators/eve', { ...as('ann'), body: { permission: 'read' } })).status).toBe(403);
    });

    test('refusals are 400; unblocking lets them follow again', async () => {
      expect((await f().request('PUT', '/user/blocks/eve', as('ann'))).status).toBe(400);
      expect((await f().request('PUT', '/user/blocks/ann', as('ann'))).status).toBe(400);
      expect((await f().request('DELETE', '/user/blocks/ben', as('ann'))).status).toBe(400);
      expect((await f().request('PUT', '/user/blocks/nobody', as('ann'))).status).toBe(404);
      expect((await f().request('GET', '/user/blocks')).status).toBe(401);
      expect((await f().request('DELETE', '/user/blocks/eve', as('ann'))).status).toBe(204);
      expect((await f().request('GET', '/user/blocks/eve', as('ann'))).status).toBe(404);
      expect((await f().request('PUT', '/user/following/ann', as('eve'))).status).toBe(204);
      expect((await f().request('PUT', '/user/starred/ann/garden', as('eve'))).status).toBe(204);
    });

    test('organizations block through their owners; members cannot be blocked', async () => {
      await ok('POST', '/orgs', 'cat', { username: 'guild' });
      await ok('POST', '/orgs/guild/repos', 'cat', { name: 'hall' });
      expect((await f().request('PUT', '/orgs/guild/blocks/cat', as('cat'))).status).toBe(400);
      expect((await f().request('PUT', '/orgs/guild/blocks/dan', as('ben'))).status).toBe(403);
      expect((await f().request('PUT', '/orgs/guild/blocks/dan?note=noise', as('cat'))).status).toBe(204);
      expect((await f().request('GET', '/orgs/guild/blocks/dan', as('cat'))).status).toBe(204);
      expect(logins(await f().request('GET', '/orgs/guild/blocks', as('cat')))).toEqual(['dan']);
      expect((await f().request('PUT', '/user/starred/guild/hall', as('dan'))).status).toBe(403);
      expect((await f().request('POST', '/repos/guild/hall/issues', { ...as('dan'), body: { title: 'x' } })).status).toBe(403);
      expect((await f().request('DELETE', '/orgs/guild/blocks/dan', as('cat'))).status).toBe(204);
      expect((await f().request('PUT', '/user/starred/guild/hall', as('dan'))).status).toBe(204);
    });

    test('public-only tokens cannot reach the user block list', async () => {
      const token = await f().token('ann', ['read:user', 'public-only']);
      expect((await f().request('GET', '/user/blocks', { token })).status).toBe(403);
    });
  });

  describe('e-mail addresses', () => {
    test('list, add (activated, secondary), refuse taken and invalid ones, delete; the primary stays', async () => {
      let res = await f().request('GET', '/user/emails', as('ben'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([expect.objectContaining({ primary: true, verified: true })]);
      const primary = res.body[0].email;
      res = await f().request('POST', '/user/emails', { ...as('ben'), body: { emails: ['ben.two@example.com', 'Ben.Three@example.com'] } });
      expect(res.status).toBe(201);
      expect(res.body.map((e: { email: string; primary: boolean; verified: boolean }) => [e.email, e.primary, e.verified])).toEqual([
        [primary, true, true],
        ['ben.two@example.com', false, true],
        ['Ben.Three@example.com', false, true],
      ]);
      res = await f().request('POST', '/user/emails', { ...as('cat'), body: { emails: ['BEN.TWO@example.com'] } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Email address has been used: BEN.TWO@example.com');
      res = await f().request('POST', '/user/emails', { ...as('cat'), body: { emails: ['not an address'] } });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('Email address "not an address" invalid');
      expect((await f().request('POST', '/user/emails', { ...as('cat'), body: { emails: [] } })).status).toBe(422);

      expect((await f().request('DELETE', '/user/emails', { ...as('ben'), body: { emails: ['ben.three@example.com'] } })).status).toBe(204);
      expect((await f().request('DELETE', '/user/emails', { ...as('ben'), body: { emails: ['nobody@example.com'] } })).status).toBe(404);
      expect((await f().request('DELETE', '/user/emails', { ...as('ben'), body: { emails: [primary] } })).status).toBe(422);
      expect((await f().request('GET', '/user/emails', as('ben'))).body).toHaveLength(2);
      // The address belongs to ben now: cat cannot delete it.
      expect((await f().request('DELETE', '/user/emails', { ...as('cat'), body: { emails: ['ben.two@example.com'] } })).status).toBe(404);
      const token = await f().token('ben', ['read:user', 'public-only']);
      expect((await f().request('GET', '/user/emails', { token })).status).toBe(403);
    });
  });

  describe('settings', () => {
    test('get the defaults, patch some, hide_email hides the address from others', async () => {
      let res = await f().request('GET', '/user/settings', as('dan'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ full_name: '', website: '', description: '', location: '', language: '', theme: 'gitea-auto', diff_view_style: '', hide_email: false, hide_activity: false });
      const email = (await f().request('GET', '/users/dan', as('ben'))).body.email;
      expect(email).not.toContain('noreply');
      res = await f().request('PATCH', '/user/settings', { ...as('dan'), body: { full_name: 'Dan D', theme: 'gitea-dark', hide_email: true } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ full_name: 'Dan D', theme: 'gitea-dark', hide_email: true, location: '' });
      expect((await f().request('GET', '/users/dan', as('ben'))).body).toMatchObject({ full_name: 'Dan D', email: expect.stringContaining('noreply') });
      expect((await f().request('PATCH', '/user/settings', { ...as('dan'), body: { full_name: 'x'.repeat(101) } })).status).toBe(422);
      expect((await f().request('PATCH', '/user/settings', { ...as('dan'), body: { website: 'not a url' } })).status).toBe(422);
      expect((await f().request('GET', '/user/settings')).status).toBe(401);
    });
  });

  describe('subscriptions, heatmap and feeds', () => {
    test('watched repositories: the own list holds private ones, another user sees public ones', async () => {
      // ann watches her repositories from their creation.
      let res = await f().request('GET', '/user/subscriptions', as('ann'));
      expect(res.status).toBe(200);
      expect(res.body.map((r: { full_name: string }) => r.full_name)).toEqual(['ann/garden', 'ann/vault']);
      expect(res.headers.get('x-total-count')).toBe('2');
      expect(res.body[1]).toMatchObject({ private: true, permissions: { admin: true } });
      res = await f().request('GET', '/users/ann/subscriptions', as('ben'));
      expect(res.body.map((r: { full_name: string }) => r.full_name)).toEqual(['ann/garden']);
      expect(res.headers.get('x-total-count')).toBe('1');
      res = await f().request('GET', '/user/subscriptions?limit=1', as('ann'));
      expect(res.headers.get('link')).toContain('rel="next"');
      expect((await f().request('GET', '/users/ann/subscriptions')).status).toBe(401);
    });

    test('the heatmap counts the user’s actions per 15 minutes; hide_activity empties it for others', async () => {
      let res = await f().request('GET', '/users/ann/heatmap');
      expect(res.status).toBe(200);
      const total = (rows: { timestamp: number; contributions: number }[]) => rows.reduce((n, r) => n + r.contributions, 0);
      expect(res.body.every((r: { timestamp: number }) => r.timestamp % 900 === 0)).toBe(true);
      const anonymous = total(res.body);
      // The private repository's creation counts for ann herself only.
      const own = total((await f().request('GET', '/users/ann/heatmap', as('ann'))).body);
      expect(own).toBe(anonymous + 1);
      expect(anonymous).toBeGreaterThanOrEqual(2);
      await ok('PATCH', '/user/settings', 'ann', { hide_activity: true });
      expect((await f().request('GET', '/users/ann/heatmap', as('ben'))).body).toEqual([]);
      expect(total((await f().request('GET', '/users/ann/heatmap', as('ann'))).body)).toBe(own);
      expect((await f().request('GET', '/users/ann/activities/feeds', as('ben'))).body).toEqual([]);
      await ok('PATCH', '/user/settings', 'ann', { hide_activity: false });
      expect((await f().request('GET', '/users/hermit/heatmap', as('ben'))).status).toBe(404);
    });

    test('user and organization feeds leave out what the viewer cannot read', async () => {
      let res = await f().request('GET', '/users/ann/activities/feeds?only-performed-by=true', as('ben'));
      expect(res.status).toBe(200);
      expect(res.body.every((a: { repo: { private: boolean } }) => !a.repo.private)).toBe(true);
      expect(res.body.map((a: { op_type: string }) => a.op_type)).toContain('create_repo');
      expect(res.headers.get('x-total-count')).toBe(String(res.body.length));
      const mine = await f().request('GET', '/users/ann/activities/feeds?only-performed-by=true', as('ann'));
      expect(mine.body.some((a: { repo: { full_name: string } }) => a.repo.full_name === 'ann/vault')).toBe(true);
      res = await f().request('GET', '/orgs/guild/activities/feeds');
      expect(res.status).toBe(200);
      expect(res.body.map((a: { op_type: string; repo: { full_name: string } }) => [a.op_type, a.repo.full_name])).toContainEqual(['create_repo', 'guild/hall']);
      expect((await f().request('GET', '/orgs/nothing/activities/feeds')).status).toBe(404);
    });
  });
});
