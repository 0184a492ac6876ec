/**
 * A `public-only` token sees only public things in lists too: every list leaves out private
 * repositories and everything of non-public owners, as the single-object routes do (403).
 * Gitea 1.27 closes the notification mailbox, keys, teams and repository creation to such
 * tokens altogether. The same user with a full token sees everything, so each assertion can
 * fail.
 */
import { describeForge, PASSWORD, type Forge } from './support/forge';

const PRIVATE_NAMES = ['secret', 'inlimited', 'inprivate'];

describeForge('public-only tokens in lists', (f) => {
  let full = '';
  let pub = '';
  const names = (res: { body: any }) => {
    const list = Array.isArray(res.body) ? res.body : res.body?.data ?? [];
    return list.map((r: { name?: string; full_name?: string; repository?: { name: string } }) => r.repository?.name ?? r.name).sort();
  };

  beforeAll(async () => {
    const forge: Forge = f();
    await forge.user('pat');
    await forge.user('other');
    const as = { basic: ['pat', PASSWORD] as [string, string] };
    const create = async (p: string, body: object) => expect((await forge.request('POST', p, { ...as, body })).status).toBe(201);
    await create('/user/repos', { name: 'open' });
    await create('/user/repos', { name: 'secret', private: true });
    await create('/orgs', { username: 'limitedorg', visibility: 'limited' });
    await create('/orgs', { username: 'privateorg', visibility: 'private' });
    await create('/orgs', { username: 'publicorg' });
    await create('/orgs/limitedorg/repos', { name: 'inlimited' });
    await create('/orgs/privateorg/repos', { name: 'inprivate' });
    await create('/orgs/publicorg/repos', { name: 'inpublic' });
    // A notification in the private repository (another user comments on pat's issue).
    const issue = await forge.request('POST', '/repos/pat/secret/issues', { ...as, body: { title: 'private matter' } });
    expect(issue.status).toBe(201);
    await forge.request('PUT', '/repos/pat/secret/collaborators/other', { ...as, body: { permission: 'write' } });
    const all = ['read:repository', 'read:user', 'read:organization', 'read:notification', 'read:issue', 'write:user', 'read:misc'];
    full = await forge.token('pat', all);
    pub = await forge.token('pat', ['public-only', ...all]);
  });

  const LISTS = [
    '/user/repos',
    '/users/pat/repos',
    '/repos/search?limit=50',
    '/repos/search?q=in&limit=50',
    '/orgs/publicorg/repos',
    '/user/orgs',
    '/users/pat/orgs',
    '/orgs',
  ];

  test.each(LISTS)('%s leaves out private repositories and non-public owners', async (p) => {
    const withFull = await f().request('GET', p, { token: full });
    const withPub = await f().request('GET', p, { token: pub });
    expect(withFull.status).toBe(200);
    expect(withPub.status).toBe(200);
    const fullNames: string[] = names(withFull);
    const pubNames: string[] = names(withPub);
    for (const n of pubNames) expect([...PRIVATE_NAMES, 'limitedorg', 'privateorg']).not.toContain(n);
    // The full token sees something the public-only one does not, on the lists that hold it.
    if (fullNames.some((n) => [...PRIVATE_NAMES, 'limitedorg', 'privateorg'].includes(n))) expect(pubNames.length).toBeLessThan(fullNames.length);
    // Headers count what is listed, not what is hidden.
    const total = withPub.headers.get('x-total-count');
    if (total !== null && !p.includes('limit=')) expect(Number(total)).toBe(pubNames.length);
  });

  test('an organization that is not public is refused as a whole (403), its repositories too', async () => {
    expect((await f().request('GET', '/orgs/privateorg/repos', { token: full })).status).toBe(200);
    expect((await f().request('GET', '/orgs/privateorg/repos', { token: pub })).status).toBe(403);
    expect((await f().request('GET', '/orgs/limitedorg/repos', { token: pub })).status).toBe(403);
    expect((await f().request('GET', '/repos/pat/secret', { token: pub })).status).toBe(403);
  });

  test('the notification mailbox is closed to public-only tokens (403, as Gitea 1.27)', async () => {
    for (const p of ['/notifications', '/notifications?all=true', '/notifications?status-types=read&status-types=pinned', '/notifications/new']) {
      expect((await f().request('GET', p, { token: full })).status).toBe(200);
      const res = await f().request('GET', p, { token: pub });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('this endpoint is not available for public-only tokens');
    }
    expect((await f().request('GET', '/repos/pat/secret/notifications', { token: pub })).status).toBe(403);
    expect((await f().request('GET', '/repos/pat/open/notifications', { token: pub })).status).toBe(200);
  });

  test('keys, teams and repository creation are closed to public-only tokens', async () => {
    for (const p of ['/user/keys', '/user/teams']) {
      expect((await f().request('GET', p, { token: full })).status).toBe(200);
      expect((await f().request('GET', p, { token: pub })).status).toBe(403);
    }
  });
});
