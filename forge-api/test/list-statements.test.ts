/**
 * List endpoints run a fixed number of SQL statements, whatever the page holds: the count for a
 * page of 2 records equals the count for a page of 8 (no query per listed record: N+1), and
 * stays under a small bound. Statements are counted at the driver adapter
 * (services/database.ts createPrisma onStatement).
 */
import { PASSWORD, providers, startForge, type Forge } from './support/forge';

/**
 * Largest statement count accepted for one list request (auth, repository, page, count, joins).
 * The user activity feed is the largest: 15, one of them the code unit's mode of the viewer's
 * teams (repository permissions follow the code unit, as Gitea's).
 */
const BOUND = 15;

interface Lists {
  [name: string]: { path: string; as: 'alice' | 'bob' | 'anonymous' };
}

const LISTS: Lists = {
  'repos search': { path: '/repos/search?limit=50', as: 'anonymous' },
  'repos search (token)': { path: '/repos/search?limit=50', as: 'bob' },
  'user repos': { path: '/user/repos?limit=50', as: 'alice' },
  'users/{u}/repos': { path: '/users/alice/repos?limit=50', as: 'bob' },
  'org repos': { path: '/orgs/crew/repos?limit=50', as: 'alice' },
  'issues': { path: '/repos/alice/tracker/issues?state=all&limit=50', as: 'bob' },
  'issue comments': { path: '/repos/alice/tracker/issues/1/comments', as: 'bob' },
  'repo comments': { path: '/repos/alice/tracker/issues/comments?limit=50', as: 'bob' },
  'labels': { path: '/repos/alice/tracker/labels?limit=50', as: 'bob' },
  'milestones': { path: '/repos/alice/tracker/milestones?state=all&limit=50', as: 'bob' },
  'notifications': { path: '/notifications?all=true&limit=50', as: 'bob' },
  'stargazers': { path: '/repos/alice/tracker/stargazers?limit=50', as: 'anonymous' },
  'user starred': { path: '/user/starred?limit=50', as: 'bob' },
  'users/{u}/starred': { path: '/users/bob/starred?limit=50', as: 'alice' },
  'assignees': { path: '/repos/alice/tracker/assignees', as: 'bob' },
  'reviewers': { path: '/repos/alice/tracker/reviewers', as: 'alice' },
  'repo teams': { path: '/repos/crew/crew-0/teams', as: 'alice' },
  'repo activity feed': { path: '/repos/alice/tracker/activities/feeds?limit=50', as: 'bob' },
  'followers': { path: '/users/alice/followers?limit=50', as: 'bob' },
  'following': { path: '/user/following?limit=50', as: 'bob' },
  'user blocks': { path: '/user/blocks?limit=50', as: 'bob' },
  'user subscriptions': { path: '/user/subscriptions?limit=50', as: 'bob' },
  'users/{u}/subscriptions': { path: '/users/bob/subscriptions?limit=50', as: 'alice' },
  'user activity feed': { path: '/users/alice/activities/feeds?limit=50', as: 'bob' },
  'org activity feed': { path: '/orgs/crew/activities/feeds?limit=50', as: 'bob' },
  'heatmap': { path: '/users/alice/heatmap', as: 'bob' },
};

for (const provider of providers()) {
  describe(`list endpoints run a fixed number of SQL statements [${provider}]`, () => {
    let forge: Forge;
    const tokens: Record<string, string> = {};
    let made = 0;

    async function ok(method: string, p: string, as: 'alice' | 'bob', body?: unknown) {
      const res = await forge.request(method, p, { token: tokens[as], body });
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${res.text}`);
      return res.body;
    }

    /** `n` more of every listed record, each with the same kinds of relations. */
    async function add(n: number) {
      for (let k = 0; k < n; k++) {
        const i = made++;
        const poster = i % 2 ? 'bob' : 'alice';
        await ok('POST', '/user/repos', 'alice', { name: `own-${i}` });
        await ok('POST', '/orgs/crew/repos', 'alice', { name: `crew-${i}` });
        const label = await ok('POST', '/repos/alice/tracker/labels', 'alice', { name: `label-${i}`, color: '#00aabb' });
        const milestone = await ok('POST', '/repos/alice/tracker/milestones', 'alice', { title: `milestone-${i}` });
        // Issue 1 exists from the start; issues 2.. carry a label, an assignee and a milestone;
        // comments come from two users.
        await ok('POST', '/repos/alice/tracker/issues', 'alice', { title: `issue ${i}`, labels: [label.id], assignees: ['alice'], milestone: milestone.id });
        await ok('POST', '/repos/alice/tracker/issues/1/comments', poster, { body: `comment ${i}` });
        // Stars, collaborators (assignees, reviewers) and teams (an org repository's teams).
        await ok('PUT', `/user/starred/alice/own-${i}`, 'bob');
        const fan = `fan-${i}`;
        await forge.user(fan);
        expect((await forge.request('PUT', '/user/starred/alice/tracker', { basic: [fan, PASSWORD] })).status).toBe(204);
        await ok('PUT', `/repos/alice/tracker/collaborators/${fan}`, 'alice', { permission: 'write' });
        await ok('POST', '/orgs/crew/teams', 'alice', { name: `team-${i}`, permission: 'read', units: ['repo.code'], includes_all_repositories: true });
        // Followers, following, blocks and watched repositories.
        expect((await forge.request('PUT', '/user/following/alice', { basic: [fan, PASSWORD] })).status).toBe(204);
        await ok('PUT', `/user/following/${fan}`, 'bob');
        await forge.user(`blocked-${i}`);
        await ok('PUT', `/user/blocks/blocked-${i}`, 'bob');
        await ok('PUT', `/repos/crew/crew-${i}/subscription`, 'bob');
      }
    }

    async function counts(): Promise<Record<string, number>> {
      const out: Record<string, number> = {};
      for (const [name, l] of Object.entries(LISTS)) {
        // The first request warms per-process caches; the second is the one measured.
        const get = () => forge.request('GET', l.path, l.as === 'anonymous' ? {} : { token: tokens[l.as] });
        const first = await get();
        if (first.status !== 200) throw new Error(`${name}: ${first.status} ${first.text}`);
        // Background statements (a token's last-used time, written at most once a minute; the
        // notifier's listeners finishing) may land inside one measurement: keep the least of three.
        const runs: number[] = [];
        for (let k = 0; k < 3; k++) runs.push(await forge.statements(async () => expect((await get()).status).toBe(200)));
        out[name] = Math.min(...runs);
      }
      return out;
    }

    beforeAll(async () => {
      forge = await startForge(provider, {}, { countStatements: true });
      await forge.user('alice');
      await forge.user('bob');
      tokens.alice = await forge.token('alice', ['all']);
      tokens.bob = await forge.token('bob', ['all']);
      await ok('POST', '/orgs', 'alice', { username: 'crew' });
      await ok('POST', '/user/repos', 'alice', { name: 'tracker' });
      await ok('PUT', '/repos/alice/tracker/subscription', 'bob');
      await ok('POST', '/repos/alice/tracker/issues', 'alice', { title: 'the first issue' });
    }, 120000);

    afterAll(async () => {
      await forge?.close();
    });

    test('a page of 8 records costs what a page of 2 costs, within the bound', async () => {
      await add(2);
      const few = await counts();
      await add(6);
      const many = await counts();
      // Every list really grew (the comparison means something).
      const issues = await forge.request('GET', '/repos/alice/tracker/issues?state=all&limit=50', { token: tokens.bob });
      expect(issues.body).toHaveLength(9);
      const notes = await forge.request('GET', '/notifications?all=true&limit=50', { token: tokens.bob });
      expect(notes.body.length).toBeGreaterThanOrEqual(4);
      const report = Object.keys(LISTS).map((name) => `${name}: ${few[name]} -> ${many[name]}`).join('; ');
      for (const name of Object.keys(LISTS)) {
        // Never more for a longer page (fewer can happen: e.g. a look-up skipped when cached).
        expect({ list: name, grew: many[name] > few[name], report }).toEqual({ list: name, grew: false, report });
        expect({ list: name, withinBound: many[name] <= BOUND, report }).toEqual({ list: name, withinBound: true, report });
      }
    }, 300000);

    test('a repository search without a keyword is one count and one page with its owners', async () => {
      // Runs after the test above: alice has 8 repositories and the org crew 8 more.
      const page = await forge.request('GET', '/repos/search?limit=5&page=2&sort=alpha');
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(5);
      expect(Number(page.headers.get('x-total-count'))).toBeGreaterThanOrEqual(17);
      expect(page.body.data.every((r: { owner: { login: string } }) => r.owner.login.length > 0)).toBe(true);
      for (const path of ['/repos/search?limit=50', '/repos/search?limit=5&page=2&sort=updated&order=desc', '/repos/search?mode=source&template=false&archived=false']) {
        const runs: number[] = [];
        for (let k = 0; k < 3; k++) runs.push(await forge.statements(async () => expect((await forge.request('GET', path)).status).toBe(200)));
        expect({ path, statements: Math.min(...runs) }).toEqual({ path, statements: 2 });
      }
    }, 60000);
  });
}
