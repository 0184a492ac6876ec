/**
 * Commit statuses: create (writers only), list per commit id and per ref (sort, state filter,
 * paging), the combined status with Gitea's rules, and the `status` webhook event; on a history
 * pushed with real git, on SQLite and PostgreSQL. Shapes and values as a real Gitea 1.27.3
 * answered for the same requests.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { describeForge, PASSWORD } from './support/forge';
import { makeSampleHistory, pushSampleHistory, type SampleHistory } from './support/git-history';
import { combineStates } from '../src/services/git-data/statuses';

test('combined state: failure beats everything, success needs all, else pending', () => {
  expect(combineStates([])).toBe('pending');
  expect(combineStates(['success', 'skipped'])).toBe('success');
  expect(combineStates(['success', 'pending'])).toBe('pending');
  expect(combineStates(['pending', 'warning', 'success'])).toBe('failure');
  expect(combineStates(['error'])).toBe('failure');
});

describeForge(
  'commit statuses',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    const repo = '/repos/root/sample';
    let tmp: string;
    let h: SampleHistory;
    let main: string;
    let modify: string;
    const hooks: any[] = [];
    let server: http.Server;

    beforeAll(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'statuses-'));
      server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          hooks.push({ event: req.headers['x-gitea-event'], body: JSON.parse(body) });
          res.end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      await f().user('root');
      await f().user('reader');
      expect((await f().request('POST', '/user/repos', { ...as('root'), body: { name: 'sample', default_branch: 'main' } })).status).toBe(201);
      h = await makeSampleHistory(path.join(tmp, 'work'), 'root@example.com');
      const remote = new URL(`${f().url}/root/sample.git`);
      remote.username = 'root';
      remote.password = PASSWORD;
      await pushSampleHistory(h, remote.toString());
      main = (await h.git('rev-parse', 'main')).trim();
      modify = (await h.git('rev-parse', 'main~1')).trim();
      const port = (server.address() as AddressInfo).port;
      const hook = await f().request('POST', `${repo}/hooks`, {
        ...as('root'),
        body: { type: 'gitea', active: true, events: ['status'], config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' } },
      });
      expect(hook.status).toBe(201);
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(tmp, { recursive: true, force: true });
    });

    test('create: 201 with the record, by sha or ref; index counts per commit', async () => {
      const first = await f().request('POST', `${repo}/statuses/${modify}`, { ...as('root'), body: { state: 'success', context: 'ci/a', target_url: 'http://x/1', description: ' d ' } });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ id: 1, status: 'success', target_url: 'http://x/1', description: 'd', context: 'ci/a', url: `${f().api}${repo}/statuses/${modify}` });
      expect(first.body.creator.login).toBe('root');
      expect(first.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(first.body.updated_at).toBe(first.body.created_at);
      for (const body of [{ state: 'failure', context: 'ci/b' }, { state: 'pending', context: 'ci/a' }, { state: 'warning' }]) {
        expect((await f().request('POST', `${repo}/statuses/${modify}`, { ...as('root'), body })).status).toBe(201);
      }
      const byRef = await f().request('POST', `${repo}/statuses/main~1`, { ...as('root'), body: { state: 'success' } });
      expect([byRef.status, byRef.body.id, byRef.body.url]).toEqual([201, 5, `${f().api}${repo}/statuses/${modify}`]);
      const other = await f().request('POST', `${repo}/statuses/${main}`, { ...as('root'), body: { state: 'success', context: 'ci/a' } });
      expect(other.body.id).toBe(1);
    });

    test('create: bad input is 4xx, readers are refused', async () => {
      const missing = await f().request('POST', `${repo}/statuses/nope`, { ...as('root'), body: { state: 'success' } });
      expect([missing.status, missing.body.message]).toEqual([404, 'object does not exist [id: nope, rel_path: ]']);
      expect((await f().request('POST', `${repo}/statuses/${main}`, { ...as('root'), body: { state: 'bogus' } })).status).toBe(422);
      expect((await f().request('POST', `${repo}/statuses/${main}`, { ...as('reader'), body: { state: 'success' } })).status).toBe(403);
      expect((await f().request('POST', `${repo}/statuses/${main}`, { body: { state: 'success' } })).status).toBe(401);
    });

    test('list per commit id and per ref: sort, state, paging headers', async () => {
      const page = await f().request('GET', `${repo}/statuses/${modify}?limit=2`, as('reader'));
      expect(page.status).toBe(200);
      expect(page.headers.get('x-total-count')).toBe('5');
      expect(page.headers.get('link')).toBe(`<${f().api}${repo}/statuses/${modify}?limit=2&page=2>; rel="next",<${f().api}${repo}/statuses/${modify}?limit=2&page=3>; rel="last"`);
      // Newest second first; within one second the order they were made in (Gitea's created_unix DESC).
      const full = await f().request('GET', `${repo}/statuses/${modify}`, as('reader'));
      const expected = [...full.body].sort((a: any, b: any) => (a.created_at === b.created_at ? a.id - b.id : a.created_at < b.created_at ? 1 : -1));
      expect(full.body.map((s: any) => s.id)).toEqual(expected.map((s: any) => s.id));
      expect(page.body.map((s: any) => s.id)).toEqual(expected.slice(0, 2).map((s: any) => s.id));
      const highest = await f().request('GET', `${repo}/commits/main~1/statuses?sort=highestindex`, as('reader'));
      expect(highest.body.map((s: any) => s.id)).toEqual([1, 2, 3, 4, 5]);
      const least = await f().request('GET', `${repo}/commits/${modify.slice(0, 7)}/statuses?sort=leastindex&state=success`, as('reader'));
      expect(least.body.map((s: any) => s.id)).toEqual([5, 1]);
      expect((await f().request('GET', `${repo}/statuses/nope`, as('reader'))).body).toEqual([]);
      const short = await f().request('GET', `${repo}/commits/${modify.slice(0, 6)}/statuses`, as('reader'));
      expect([short.status, short.body.message]).toEqual([404, `object does not exist [id: ${modify.slice(0, 6)}, rel_path: ]`]);
    });

    test('combined status: newest per context, Gitea state rules, paged', async () => {
      const all = await f().request('GET', `${repo}/commits/${modify}/status`, as('reader'));
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ state: 'failure', sha: modify, total_count: 3, commit_url: `${f().api}${repo}/commits/${modify}`, url: `${f().api}${repo}/commits/${modify}/status` });
      expect(all.body.statuses.map((s: any) => [s.id, s.status, s.context])).toEqual([
        [2, 'failure', 'ci/b'],
        [3, 'pending', 'ci/a'],
        [5, 'success', ''],
      ]);
      expect(all.body.repository.full_name).toBe('root/sample');
      const page = await f().request('GET', `${repo}/commits/${modify}/status?limit=2`, as('reader'));
      expect(page.headers.get('x-total-count')).toBe('3');
      expect([page.body.state, page.body.total_count, page.body.statuses.map((s: any) => s.id)]).toEqual(['pending', 2, [3, 5]]);
      const mainStatus = await f().request('GET', `${repo}/commits/main/status`, as('reader'));
      expect([mainStatus.body.state, mainStatus.body.sha]).toEqual(['success', main]);
      const none = await f().request('GET', `${repo}/commits/feature/status`, as('reader'));
      expect([none.body.state, none.body.total_count, none.body.statuses]).toEqual(['pending', 0, null]);
      expect((await f().request('GET', `${repo}/commits/nope/status`, as('reader'))).status).toBe(404);
    });

    test('a status webhook is delivered with Gitea\'s payload', async () => {
      const deadline = Date.now() + 30_000;
      while (hooks.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const first = hooks.find((x) => x.body.sha === modify && x.body.id !== undefined && x.body.context === 'ci/a' && x.body.state === 'success');
      expect(first.event).toBe('status');
      expect(first.body).toMatchObject({ sha: modify, state: 'success', context: 'ci/a', description: 'd', target_url: 'http://x/1' });
      expect(first.body.commit.id).toBe(modify);
      expect(first.body.commit.message).toBe('modify tool, remove css\n');
      expect(first.body.repository.full_name).toBe('root/sample');
      expect(first.body.sender.login).toBe('root');
    });
  },
  { webhookAllowedHostList: 'loopback' },
);
