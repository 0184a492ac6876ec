/**
 * Sends the same requests to a real Gitea and to the forge and prints where the answers differ:
 * status code, content type, JSON keys and value types (recursively; the first element stands
 * for an array), and the paging headers (X-Total-Count, the rels of Link). Values themselves
 * (ids, times, URLs) are not compared: the two servers hold different rows.
 *
 * Run by hand, never in CI (Gitea is a reference, not a dependency of the product):
 *   ../shared/tools/gitea/start.sh 3300 /tmp/gitea-cmp      # a Gitea 1.27.3; admin root / portcullis-root-1
 *   FORGE_PORT=3400 FORGE_DATA_DIR=$(mktemp -d) npx portcullis-forge serve &
 *   npx portcullis-forge admin user create --username root --password portcullis-root-1 --email root@example.com --admin   # same FORGE_DATA_DIR
 *   npx tsx scripts/compare-gitea.ts --gitea http://127.0.0.1:3300 --forge http://127.0.0.1:3400 [--admin root:portcullis-root-1] [--only PATTERN]
 * Each run creates its own users, organization and repositories (names carry a run id), so
 * servers can be reused. Exit status 1 when some answer differs.
 */

import crypto from 'node:crypto';

type Json = unknown;

/** A new ed25519 public key in OpenSSH form (a key may be added only once per server). */
function sshKey(): string {
  const der = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  const raw = der.subarray(der.length - 32);
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64')} compare@example`;
}

interface Side {
  name: 'gitea' | 'forge';
  base: string;
  tokens: Record<string, string>;
  /** Ids (or fields) a check saved from its answer (`save`), for later paths on the same server. */
  saved: Record<string, number | string>;
}

interface Answer {
  status: number;
  type: string;
  body: Json;
  text: string;
  total: string | null;
  links: string[];
}

interface Check {
  what: string;
  method: string;
  /** A path, or one built from ids saved by earlier checks on that server. */
  path: string | ((saved: Record<string, number | string>) => string);
  as?: string;
  body?: unknown;
  /** A body built from ids saved by earlier checks on that server. */
  bodyOf?: (saved: Record<string, number | string>) => unknown;
  raw?: string;
  contentType?: string;
  /** Save the answer's `id` (a list's: its first item's) under this name. */
  save?: string;
  /** Save this dotted field of the answer (a list's: its first item's) instead of `id` ("head.sha"). */
  saveField?: string;
  /** Compare the error message too (both answers' `message`, or `Message`). */
  message?: boolean;
  /** Top-level keys whose values must be equal too (objects compared with sorted keys). */
  values?: string[];
  /** For a list (or `{data: [...]}`): these keys of each item must be equal too, items matched by `name`. */
  itemValues?: string[];
  /** For a list: these keys of each item, in order, must be equal too. */
  listValues?: string[];
}

function arg(name: string, dflt?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && process.argv[i + 1]) return process.argv[i + 1];
  if (dflt !== undefined) return dflt;
  throw new Error(`missing --${name}`);
}

const admin = arg('admin', 'root:portcullis-root-1');
const only = process.argv.includes('--only') ? new RegExp(arg('only')) : null;
const run = Date.now().toString(36).slice(-5);
const PASSWORD = 'compare-pass-1';
const users = { alice: `alice${run}`, bob: `bob${run}` };
const org = `org${run}`;

async function send(side: Side, method: string, path: string, opts: { as?: string; body?: unknown; raw?: string; contentType?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.as === 'admin') headers.authorization = `Basic ${Buffer.from(admin).toString('base64')}`;
  else if (opts.as) headers.authorization = `token ${side.tokens[opts.as]}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) {
    payload = opts.raw;
    headers['content-type'] = opts.contentType ?? 'text/plain';
  } else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${side.base}/api/v1${path}`, { method, headers, body: payload, redirect: 'manual' });
  const text = await res.text();
  let body: Json = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const link = res.headers.get('link') ?? '';
  return {
    status: res.status,
    type: (res.headers.get('content-type') ?? '').split(';')[0].trim(),
    body,
    text,
    total: res.headers.get('x-total-count'),
    links: [...link.matchAll(/rel="(\w+)"/g)].map((m) => m[1]).sort(),
  };
}

function typeOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Differences of shape between two JSON values, as "path: gitea X, forge Y" lines. */
function shapeDiff(g: Json, f: Json, path = '$'): string[] {
  const tg = typeOf(g);
  const tf = typeOf(f);
  if (tg !== tf) return [`${path}: gitea ${tg}, forge ${tf}`];
  if (tg === 'array') {
    const ga = g as Json[];
    const fa = f as Json[];
    if (ga.length === 0 || fa.length === 0) return ga.length === fa.length ? [] : [`${path}: gitea ${ga.length} items, forge ${fa.length}`];
    return shapeDiff(ga[0], fa[0], `${path}[0]`);
  }
  if (tg !== 'object') return [];
  const go = g as Record<string, Json>;
  const fo = f as Record<string, Json>;
  const out: string[] = [];
  for (const k of Object.keys(go)) if (!(k in fo)) out.push(`${path}.${k}: only in gitea (${typeOf(go[k])})`);
  for (const k of Object.keys(fo)) if (!(k in go)) out.push(`${path}.${k}: only in forge (${typeOf(fo[k])})`);
  for (const k of Object.keys(go)) if (k in fo) out.push(...shapeDiff(go[k], fo[k], `${path}.${k}`));
  return out;
}

function errorMessage(a: Answer): unknown {
  const b = a.body as Record<string, unknown> | undefined;
  return b && typeof b === 'object' ? (b.message ?? b.Message) : undefined;
}

/** JSON with object keys sorted, so that maps compare by content. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** The items of a list answer (an array, or the `data` of a search answer) by name, with only `keys`. */
function itemsByName(body: unknown, keys: string[]): string {
  const list = Array.isArray(body) ? body : ((body as { data?: unknown[] } | undefined)?.data ?? []);
  const rows = (list as Record<string, unknown>[]).map((it) => canonical({ name: it.name, ...Object.fromEntries(keys.map((k) => [k, it[k]])) }));
  return rows.sort().join(' ');
}

/** These keys of every item of a list answer, in order. */
function listItems(body: unknown, keys: string[]): string {
  const list = Array.isArray(body) ? (body as Record<string, unknown>[]) : [];
  return list.map((it) => canonical(Object.fromEntries(keys.map((k) => [k, it[k]])))).join(' ');
}

function compare(g: Answer, f: Answer, message = false, values: string[] = [], itemValues: string[] = [], listValues: string[] = []): string[] {
  const out: string[] = [];
  if (listValues.length) {
    const [gl, fl] = [listItems(g.body, listValues), listItems(f.body, listValues)];
    if (gl !== fl) out.push(`list: gitea ${gl}, forge ${fl}`);
  }
  if (itemValues.length) {
    const [gi, fi] = [itemsByName(g.body, itemValues), itemsByName(f.body, itemValues)];
    if (gi !== fi) out.push(`items: gitea ${gi}, forge ${fi}`);
  }
  for (const key of values) {
    const [gv, fv] = [g.body, f.body].map((b) => canonical((b as Record<string, unknown> | undefined)?.[key]));
    if (gv !== fv) out.push(`${key}: gitea ${gv}, forge ${fv}`);
  }
  if (message && errorMessage(g) !== errorMessage(f)) out.push(`message: gitea ${JSON.stringify(errorMessage(g))}, forge ${JSON.stringify(errorMessage(f))}`);
  if (g.status !== f.status) out.push(`status: gitea ${g.status}, forge ${f.status}${g.status >= 400 ? ` (gitea says ${g.text.slice(0, 120)})` : ''}`);
  if (g.type !== f.type) out.push(`content-type: gitea ${g.type || '(none)'}, forge ${f.type || '(none)'}`);
  if ((g.total === null) !== (f.total === null) || (g.total !== null && g.total !== f.total)) out.push(`X-Total-Count: gitea ${g.total}, forge ${f.total}`);
  if (g.links.join(',') !== f.links.join(',')) out.push(`Link rels: gitea [${g.links}], forge [${f.links}]`);
  if (g.status === f.status) out.push(...shapeDiff(g.body, f.body));
  if (g.body === undefined && f.body === undefined && (g.text === '') !== (f.text === '')) out.push(`body: gitea ${g.text ? 'text' : 'empty'}, forge ${f.text ? 'text' : 'empty'}`);
  return out;
}

/** The same fixtures on one server: two users with tokens, an organization with a team, repositories, an issue with a comment. */
async function setUp(side: Side): Promise<void> {
  const must = async (what: string, a: Promise<Answer>, ok = [200, 201, 204]) => {
    const r = await a;
    if (!ok.includes(r.status)) throw new Error(`${side.name}: ${what} answered ${r.status}: ${r.text.slice(0, 200)}`);
    return r;
  };
  for (const name of Object.values(users)) {
    await must(`create ${name}`, send(side, 'POST', '/admin/users', { as: 'admin', body: { username: name, email: `${name}@example.com`, password: PASSWORD, must_change_password: false } }));
    const basic = `Basic ${Buffer.from(`${name}:${PASSWORD}`).toString('base64')}`;
    const res = await fetch(`${side.base}/api/v1/users/${name}/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'compare', scopes: ['all'] }),
    });
    side.tokens[name] = ((await res.json()) as { sha1: string }).sha1;
  }
  const { alice, bob } = users;
  await must('org', send(side, 'POST', '/orgs', { as: alice, body: { username: org, visibility: 'public' } }));
  await must('org repo', send(side, 'POST', `/orgs/${org}/repos`, { as: alice, body: { name: 'shared', private: true } }));
  const team = await must('team', send(side, 'POST', `/orgs/${org}/teams`, { as: alice, body: { name: 'readers', permission: 'read', units: ['repo.code', 'repo.issues'] } }));
  const teamId = (team.body as { id: number }).id;
  await must('team member', send(side, 'PUT', `/teams/${teamId}/members/${bob}`, { as: alice }));
  await must('team repo', send(side, 'PUT', `/teams/${teamId}/repos/${org}/shared`, { as: alice }));
  await must('repo', send(side, 'POST', '/user/repos', { as: alice, body: { name: 'proj', auto_init: true, license: 'MIT', gitignores: 'Node', readme: 'Default' } }));
  await must('empty repo', send(side, 'POST', '/user/repos', { as: bob, body: { name: 'empty' } }));
  await must('label', send(side, 'POST', `/repos/${alice}/proj/labels`, { as: alice, body: { name: 'bug', color: '#ee0701' } }));
  await must('milestone', send(side, 'POST', `/repos/${alice}/proj/milestones`, { as: alice, body: { title: 'v1' } }));
  await must('issue', send(side, 'POST', `/repos/${alice}/proj/issues`, { as: alice, body: { title: 'first', body: 'hello @' + bob, assignees: [alice] } }));
  await must('comment', send(side, 'POST', `/repos/${alice}/proj/issues/1/comments`, { as: bob, body: { body: 'a comment' } }));
  await must('second issue', send(side, 'POST', `/repos/${alice}/proj/issues`, { as: bob, body: { title: 'second' } }));
  await must('key', send(side, 'POST', '/user/keys', { as: alice, body: { key: sshKey(), title: `k${run}` } }));
}

function checks(): Check[] {
  const { alice, bob } = users;
  const r = `/repos/${alice}/proj`;
  return [
    { what: 'version', method: 'GET', path: '/version' },
    { what: 'settings api', method: 'GET', path: '/settings/api' },
    { what: 'current user', method: 'GET', path: '/user', as: alice },
    { what: 'other user', method: 'GET', path: `/users/${alice}`, as: bob },
    { what: 'user anonymous', method: 'GET', path: `/users/${alice}` },
    { what: 'user search', method: 'GET', path: `/users/search?q=${run}`, as: bob },
    { what: 'my repos', method: 'GET', path: '/user/repos?limit=1', as: bob },
    { what: 'my repos all', method: 'GET', path: '/user/repos', as: bob },
    { what: "user's repos", method: 'GET', path: `/users/${alice}/repos`, as: bob },
    { what: 'repo get', method: 'GET', path: r, as: bob },
    { what: 'repo get anonymous', method: 'GET', path: r },
    { what: 'empty repo get', method: 'GET', path: `/repos/${bob}/empty`, as: bob },
    { what: 'repo missing', method: 'GET', path: `/repos/${alice}/nothing`, as: alice },
    { what: 'repo search', method: 'GET', path: `/repos/search?q=proj&limit=1`, as: alice },
    { what: 'repo create exists', method: 'POST', path: '/user/repos', as: alice, body: { name: 'proj' } },
    { what: 'repo create bad name', method: 'POST', path: '/user/repos', as: alice, body: { name: 'bad name' } },
    { what: 'org get', method: 'GET', path: `/orgs/${org}`, as: bob },
    { what: 'org repos', method: 'GET', path: `/orgs/${org}/repos`, as: bob },
    { what: 'org teams', method: 'GET', path: `/orgs/${org}/teams`, as: alice },
    { what: 'my orgs', method: 'GET', path: '/user/orgs', as: alice },
    { what: 'issues list', method: 'GET', path: `${r}/issues?limit=1`, as: bob },
    { what: 'issue get', method: 'GET', path: `${r}/issues/1`, as: bob },
    { what: 'issue get anonymous', method: 'GET', path: `${r}/issues/1` },
    { what: 'issue missing', method: 'GET', path: `${r}/issues/999`, as: bob },
    { what: 'issue create with nulls', method: 'POST', path: `${r}/issues`, as: alice, body: { title: 'nulls', body: null, due_date: null, milestone: null, labels: null, assignees: null } },
    { what: 'issue assign a reader', method: 'POST', path: `${r}/issues`, as: alice, body: { title: 'assigned', assignees: [bob] } },
    { what: 'issue create no title', method: 'POST', path: `${r}/issues`, as: alice, body: {} },
    { what: 'issue edit', method: 'PATCH', path: `${r}/issues/2`, as: alice, body: { title: 'second, edited' } },
    { what: 'comments list', method: 'GET', path: `${r}/issues/1/comments`, as: alice },
    { what: 'repo comments', method: 'GET', path: `${r}/issues/comments`, as: alice },
    ...trackedTimeChecks(r),
    ...timelineEventChecks(r),
    ...peopleChecks(),
    ...orgChecks(),
    ...teamWatchChecks(),
    ...issueExtraChecks(r),
    ...pullChecks(),
    ...adminChecks(),
    { what: 'labels', method: 'GET', path: `${r}/labels`, as: bob },
    { what: 'milestones', method: 'GET', path: `${r}/milestones`, as: bob },
    { what: 'my keys', method: 'GET', path: '/user/keys', as: alice },
    { what: "someone's keys", method: 'GET', path: `/users/${alice}/keys`, as: bob },
    { what: 'my tokens', method: 'GET', path: `/users/${alice}/tokens`, as: 'admin' },
    { what: 'notifications', method: 'GET', path: '/notifications?all=true', as: bob },
    { what: 'markdown', method: 'POST', path: '/markdown', as: alice, body: { Text: '**x**', Mode: 'gfm' } },
    { what: 'markdown raw', method: 'POST', path: '/markdown/raw', as: alice, raw: '**x**' },
    { what: 'wrong method', method: 'DELETE', path: '/version', as: alice },
    { what: 'wrong method with params', method: 'PUT', path: `${r}/issues`, as: alice },
    { what: 'unknown path', method: 'GET', path: '/nope/nothing', as: alice },
    { what: 'gitignore templates', method: 'GET', path: '/gitignore/templates' },
    { what: 'license templates', method: 'GET', path: '/licenses' },
    { what: 'admin users', method: 'GET', path: '/admin/users?limit=1', as: 'admin' },
    { what: 'admin orgs', method: 'GET', path: '/admin/orgs', as: 'admin' },
    { what: 'admin not admin', method: 'GET', path: '/admin/users', as: bob },
    { what: 'no token', method: 'GET', path: '/user' },
    { what: 'repo delete by reader', method: 'DELETE', path: r, as: bob },
  ];
}

/**
 * The time tracker: issue 1 is alice's (alice assigned), issue 2 bob's; bob only reads the
 * repository. Messages are compared where Gitea's text is fixed.
 */
function trackedTimeChecks(r: string): Check[] {
  const { alice, bob } = users;
  const m = true;
  const tracker = (on: boolean) => ({ has_issues: true, internal_tracker: { enable_time_tracker: on, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true } });
  return [
    { what: 'times empty', method: 'GET', path: `${r}/issues/1/times`, as: alice },
    { what: 'time add with created', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: 3600, created: '2020-01-02T03:04:05Z' }, save: 'aliceTime' },
    { what: 'time add by reader', method: 'POST', path: `${r}/issues/1/times`, as: bob, body: { time: 60 } },
    { what: 'time add by poster', method: 'POST', path: `${r}/issues/2/times`, as: bob, body: { time: 120 }, save: 'bobTime' },
    { what: 'time add zero', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: 0 }, message: m },
    { what: 'time add no body', method: 'POST', path: `${r}/issues/1/times`, as: alice },
    { what: 'time add negative', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: -5 } },
    { what: 'time add for another user', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: 30, user_name: bob }, save: 'bobOnAlice' },
    { what: 'time add for nobody', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: 30, user_name: `nobody${run}` } },
    { what: 'time add missing issue', method: 'POST', path: `${r}/issues/999/times`, as: alice, body: { time: 30 } },
    { what: 'time add anonymous', method: 'POST', path: `${r}/issues/1/times`, body: { time: 30 }, message: m },
    { what: 'times page', method: 'GET', path: `${r}/issues/1/times?limit=1&page=2`, as: alice },
    { what: 'times as reader', method: 'GET', path: `${r}/issues/1/times`, as: bob },
    { what: 'times reader asks for a user', method: 'GET', path: `${r}/issues/1/times?user=${alice}`, as: bob, message: m },
    { what: 'times unknown user', method: 'GET', path: `${r}/issues/1/times?user=nobody${run}`, as: alice },
    { what: 'times bad since', method: 'GET', path: `${r}/issues/1/times?since=yesterday`, as: alice },
    { what: 'times since', method: 'GET', path: `${r}/issues/1/times?since=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00%2B02:00`, as: alice },
    { what: 'times since future', method: 'GET', path: `${r}/issues/1/times?since=2999-01-01T00:00:00Z`, as: alice },
    { what: 'times anonymous', method: 'GET', path: `${r}/issues/1/times`, message: m },
    { what: 'repo times', method: 'GET', path: `${r}/times?limit=2`, as: alice },
    { what: 'repo times as reader', method: 'GET', path: `${r}/times`, as: bob },
    { what: 'repo times reader asks for a user', method: 'GET', path: `${r}/times?user=${alice}`, as: bob, message: m },
    { what: 'repo times of a user', method: 'GET', path: `${r}/times/${bob}`, as: bob },
    { what: "repo times of someone else", method: 'GET', path: `${r}/times/${alice}`, as: bob, message: m },
    { what: 'repo times of nobody', method: 'GET', path: `${r}/times/nobody${run}`, as: alice },
    { what: 'my times', method: 'GET', path: '/user/times', as: bob },
    { what: 'my times anonymous', method: 'GET', path: '/user/times' },
    { what: "time delete someone else's", method: 'DELETE', path: (s) => `${r}/issues/1/times/${s.aliceTime}`, as: bob },
    { what: 'time delete of another issue', method: 'DELETE', path: (s) => `${r}/issues/1/times/${s.bobTime}`, as: bob },
    { what: 'time delete by repo owner', method: 'DELETE', path: (s) => `${r}/issues/1/times/${s.bobOnAlice}`, as: alice },
    { what: 'time delete own', method: 'DELETE', path: (s) => `${r}/issues/2/times/${s.bobTime}`, as: bob },
    { what: 'time delete again', method: 'DELETE', path: (s) => `${r}/issues/2/times/${s.bobTime}`, as: bob, message: m },
    { what: 'time delete not a number', method: 'DELETE', path: `${r}/issues/1/times/abc`, as: alice, message: m },
    { what: 'time delete by site admin', method: 'DELETE', path: (s) => `${r}/issues/1/times/${s.bobOnAlice}`, as: 'admin' },
    { what: 'times reset by reader', method: 'DELETE', path: `${r}/issues/1/times`, as: bob },
    { what: 'times reset', method: 'DELETE', path: `${r}/issues/1/times`, as: alice },
    { what: 'times reset again', method: 'DELETE', path: `${r}/issues/1/times`, as: alice, message: m },
    { what: 'stopwatch start', method: 'POST', path: `${r}/issues/1/stopwatch/start`, as: alice },
    { what: 'stopwatch start again', method: 'POST', path: `${r}/issues/1/stopwatch/start`, as: alice, message: m },
    { what: 'my stopwatches', method: 'GET', path: '/user/stopwatches', as: alice },
    { what: 'stopwatch start another', method: 'POST', path: `${r}/issues/2/stopwatch/start`, as: alice },
    { what: 'stopwatch stop not running', method: 'POST', path: `${r}/issues/1/stopwatch/stop`, as: alice, message: m },
    { what: 'stopwatch cancel not running', method: 'DELETE', path: `${r}/issues/1/stopwatch/delete`, as: alice, message: m },
    { what: 'times after a stopwatch switch', method: 'GET', path: `${r}/issues/1/times`, as: alice },
    { what: 'stopwatch stop', method: 'POST', path: `${r}/issues/2/stopwatch/stop`, as: alice },
    { what: 'stopwatch by reader', method: 'POST', path: `${r}/issues/2/stopwatch/start`, as: bob },
    { what: 'stopwatch missing issue', method: 'POST', path: `${r}/issues/999/stopwatch/start`, as: alice, message: m },
    { what: 'stopwatch start for cancel', method: 'POST', path: `${r}/issues/1/stopwatch/start`, as: alice },
    { what: 'stopwatch cancel', method: 'DELETE', path: `${r}/issues/1/stopwatch/delete`, as: alice },
    { what: 'stopwatches none', method: 'GET', path: '/user/stopwatches?limit=1', as: alice },
    { what: 'comments leave out time events', method: 'GET', path: `${r}/issues/1/comments`, as: alice },
    { what: 'timeline of time events', method: 'GET', path: `${r}/issues/1/timeline`, as: alice },
    { what: 'timeline page', method: 'GET', path: `${r}/issues/1/timeline?limit=2&page=2`, as: bob },
    { what: 'timeline anonymous', method: 'GET', path: `${r}/issues/2/timeline` },
    { what: 'tracker off', method: 'PATCH', path: r, as: alice, body: tracker(false) },
    { what: 'tracker off: times', method: 'GET', path: `${r}/issues/1/times`, as: alice, message: m },
    { what: 'tracker off: add', method: 'POST', path: `${r}/issues/1/times`, as: alice, body: { time: 5 }, message: m },
    { what: 'tracker off: reset', method: 'DELETE', path: `${r}/issues/1/times`, as: alice, message: m },
    { what: 'tracker off: delete', method: 'DELETE', path: (s) => `${r}/issues/1/times/${s.aliceTime}`, as: alice, message: m },
    { what: 'tracker off: repo times', method: 'GET', path: `${r}/times`, as: alice, message: m },
    { what: 'tracker off: repo times of a user', method: 'GET', path: `${r}/times/${alice}`, as: alice, message: m },
    { what: 'tracker off: stopwatch', method: 'POST', path: `${r}/issues/1/stopwatch/start`, as: alice },
    { what: 'tracker on', method: 'PATCH', path: r, as: alice, body: tracker(true) },
  ];
}

/**
 * Label, milestone and deadline events on the timeline: each change through the routes that
 * make it, then the timeline, whose entries must have the same types and shapes in order
 * (the first entry of a list stands for the rest, so each event is read on its own page).
 */
function timelineEventChecks(r: string): Check[] {
  const { alice } = users;
  const i = `${r}/issues`;
  const entries = ['label added', 'label removed', 'milestone set', 'deadline added', 'deadline modified', 'milestone unset', 'deadline removed', 'labels replaced', 'labels cleared'];
  return [
    { what: 'events: label', method: 'POST', path: `${r}/labels`, as: alice, body: { name: 'feature', color: '#00aa00' }, save: 'feature' },
    { what: 'events: milestone', method: 'POST', path: `${r}/milestones`, as: alice, body: { title: 'v2' }, save: 'v2' },
    { what: 'events: issue with label and milestone', method: 'POST', path: i, as: alice, bodyOf: (s) => ({ title: 'events', labels: [s.feature], milestone: s.v2 }), save: 'eventsIssue' },
    { what: 'events: creation timeline', method: 'GET', path: `${i}/5/timeline`, as: alice },
    { what: 'events: add label', method: 'POST', path: `${i}/4/labels`, as: alice, bodyOf: (s) => ({ labels: [s.feature] }) },
    { what: 'events: remove label', method: 'DELETE', path: (s) => `${i}/4/labels/${s.feature}`, as: alice },
    { what: 'events: set milestone and deadline', method: 'PATCH', path: `${i}/4`, as: alice, bodyOf: (s) => ({ milestone: s.v2, due_date: '2030-01-01T00:00:00Z' }) },
    { what: 'events: change deadline', method: 'POST', path: `${i}/4/deadline`, as: alice, body: { due_date: '2031-02-03T00:00:00Z' } },
    { what: 'events: unset milestone', method: 'PATCH', path: `${i}/4`, as: alice, body: { milestone: 0 } },
    { what: 'events: remove deadline', method: 'PATCH', path: `${i}/4`, as: alice, body: { unset_due_date: true } },
    { what: 'events: replace labels', method: 'PUT', path: `${i}/4/labels`, as: alice, bodyOf: (s) => ({ labels: [s.feature] }) },
    { what: 'events: clear labels', method: 'DELETE', path: `${i}/4/labels`, as: alice },
    { what: 'events: timeline length', method: 'GET', path: `${i}/4/timeline?limit=50`, as: alice },
    ...entries.map((e, n): Check => ({ what: `events: ${e}`, method: 'GET', path: `${i}/4/timeline?limit=1&page=${n + 2}`, as: alice })),
  ];
}

/** Follows, blocks, e-mail addresses, GPG keys, settings, heatmap, feeds and subscriptions. */
function peopleChecks(): Check[] {
  const { alice, bob } = users;
  return [
    { what: 'follow', method: 'PUT', path: `/user/following/${alice}`, as: bob },
    { what: 'follow self', method: 'PUT', path: `/user/following/${bob}`, as: bob },
    { what: 'follow nobody', method: 'PUT', path: `/user/following/nobody${run}`, as: bob },
    { what: 'my following', method: 'GET', path: '/user/following', as: bob },
    { what: 'my followers', method: 'GET', path: '/user/followers', as: alice },
    { what: "someone's followers", method: 'GET', path: `/users/${alice}/followers` },
    { what: "someone's following", method: 'GET', path: `/users/${bob}/following`, as: alice },
    { what: 'check following', method: 'GET', path: `/user/following/${alice}`, as: bob },
    { what: 'check not following', method: 'GET', path: `/user/following/${bob}`, as: alice },
    { what: 'check user follows', method: 'GET', path: `/users/${bob}/following/${alice}` },
    { what: 'unfollow', method: 'DELETE', path: `/user/following/${alice}`, as: bob },
    { what: 'block with note', method: 'PUT', path: `/user/blocks/${bob}?note=spam`, as: alice },
    { what: 'block again', method: 'PUT', path: `/user/blocks/${bob}`, as: alice },
    { what: 'blocks list', method: 'GET', path: '/user/blocks', as: alice },
    { what: 'block check', method: 'GET', path: `/user/blocks/${bob}`, as: alice },
    { what: 'blocked follows', method: 'PUT', path: `/user/following/${alice}`, as: bob },
    { what: 'blocked stars', method: 'PUT', path: `/user/starred/${alice}/proj`, as: bob },
    { what: 'blocked comments', method: 'POST', path: `/repos/${alice}/proj/issues/1/comments`, as: bob, body: { body: 'blocked' } },
    { what: 'blocked opens an issue', method: 'POST', path: `/repos/${alice}/proj/issues`, as: bob, body: { title: 'blocked' } },
    { what: 'unblock', method: 'DELETE', path: `/user/blocks/${bob}`, as: alice },
    { what: 'unblock again', method: 'DELETE', path: `/user/blocks/${bob}`, as: alice },
    { what: 'block check after', method: 'GET', path: `/user/blocks/${bob}`, as: alice },
    { what: 'emails', method: 'GET', path: '/user/emails', as: alice },
    { what: 'email add', method: 'POST', path: '/user/emails', as: alice, body: { emails: [`second${run}@example.com`] } },
    { what: 'email add taken', method: 'POST', path: '/user/emails', as: alice, body: { emails: [`${bob}@example.com`] } },
    { what: 'email add bad', method: 'POST', path: '/user/emails', as: alice, body: { emails: ['not-an-address'] } },
    { what: 'email delete', method: 'DELETE', path: '/user/emails', as: alice, body: { emails: [`second${run}@example.com`] } },
    { what: 'email delete primary', method: 'DELETE', path: '/user/emails', as: alice, body: { emails: [`${alice}@example.com`] } },
    { what: 'gpg keys', method: 'GET', path: '/user/gpg_keys', as: alice },
    { what: 'gpg key bad', method: 'POST', path: '/user/gpg_keys', as: alice, body: { armored_public_key: 'nonsense' } },
    { what: 'gpg key missing', method: 'GET', path: '/user/gpg_keys/999999', as: alice },
    { what: "someone's gpg keys", method: 'GET', path: `/users/${alice}/gpg_keys`, as: bob },
    { what: 'gpg token', method: 'GET', path: '/user/gpg_key_token', as: alice },
    { what: 'settings', method: 'GET', path: '/user/settings', as: alice },
    { what: 'settings edit', method: 'PATCH', path: '/user/settings', as: alice, body: { full_name: 'Alice', hide_email: true } },
    { what: 'heatmap', method: 'GET', path: `/users/${alice}/heatmap`, as: bob },
    { what: 'user feeds', method: 'GET', path: `/users/${alice}/activities/feeds?limit=1`, as: alice },
    { what: 'user feeds anonymous', method: 'GET', path: `/users/${alice}/activities/feeds?limit=1` },
    { what: 'watch', method: 'PUT', path: `/repos/${alice}/proj/subscription`, as: bob },
    { what: 'my subscriptions', method: 'GET', path: '/user/subscriptions', as: bob },
    { what: "someone's subscriptions", method: 'GET', path: `/users/${bob}/subscriptions`, as: alice },
    { what: 'avatar delete', method: 'DELETE', path: '/user/avatar', as: alice },
    { what: 'avatar bad', method: 'POST', path: '/user/avatar', as: alice, body: { image: 'bm90IGFuIGltYWdl' } },
  ];
}

/** Organization edit, members, public members, blocks, repositories and feeds. */
function orgChecks(): Check[] {
  const { alice, bob } = users;
  const o = `/orgs/${org}`;
  return [
    { what: 'org edit', method: 'PATCH', path: o, as: alice, body: { full_name: 'Compare Org', location: 'Here' } },
    { what: 'org edit by member', method: 'PATCH', path: o, as: bob, body: { full_name: 'x' } },
    { what: 'org members', method: 'GET', path: `${o}/members`, as: alice },
    { what: 'org members anonymous', method: 'GET', path: `${o}/members` },
    { what: 'org member check', method: 'GET', path: `${o}/members/${bob}`, as: alice },
    { what: 'org member check outsider', method: 'GET', path: `${o}/members/nobody${run}`, as: alice },
    { what: 'org public members', method: 'GET', path: `${o}/public_members`, as: bob },
    { what: 'org publicize', method: 'PUT', path: `${o}/public_members/${bob}`, as: bob },
    { what: 'org publicize other', method: 'PUT', path: `${o}/public_members/${alice}`, as: bob },
    { what: 'org public member check', method: 'GET', path: `${o}/public_members/${bob}` },
    { what: 'org conceal', method: 'DELETE', path: `${o}/public_members/${bob}`, as: bob },
    { what: 'org blocks', method: 'GET', path: `${o}/blocks`, as: alice },
    { what: 'org block', method: 'PUT', path: `${o}/blocks/nobody${run}`, as: alice },
    { what: 'org feeds', method: 'GET', path: `${o}/activities/feeds?limit=1`, as: alice },
    { what: 'org repo create', method: 'POST', path: `${o}/repos`, as: alice, body: { name: 'made' } },
    { what: 'org repo create deprecated', method: 'POST', path: `/org/${org}/repos`, as: alice, body: { name: 'made2' } },
    { what: 'org delete with repos', method: 'DELETE', path: o, as: alice },
  ];
}

/**
 * Gitea's watch rules for teams (AUTO_WATCH_NEW_REPOS, on by default): joining a team watches
 * its repositories, a repository added to a team (or created under an includes-all team) is
 * watched by its members, and leaving drops the watches of what the user can no longer read
 * (leaving the organization: of every repository of it). Counts are compared through
 * X-Total-Count of the watch lists.
 */
function teamWatchChecks(): Check[] {
  const { alice, bob } = users;
  const o = `/orgs/${org}`;
  const units = ['repo.code', 'repo.issues'];
  return [
    { what: 'watch: public org repo', method: 'POST', path: `${o}/repos`, as: alice, body: { name: 'open' } },
    { what: 'watch: includes-all team', method: 'POST', path: `${o}/teams`, as: alice, body: { name: 'everything', permission: 'read', units, includes_all_repositories: true }, save: 'everything' },
    { what: 'watch: join includes-all team', method: 'PUT', path: (s) => `/teams/${s.everything}/members/${bob}`, as: alice },
    { what: 'watch: team repos', method: 'GET', path: (s) => `/teams/${s.everything}/repos`, as: alice },
    { what: 'watch: subscriptions after joining', method: 'GET', path: '/user/subscriptions', as: bob },
    { what: 'watch: private repo under includes-all team', method: 'POST', path: `${o}/repos`, as: alice, body: { name: 'later', private: true } },
    { what: 'watch: its watchers', method: 'GET', path: `/repos/${org}/later/subscribers`, as: alice },
    { what: 'watch: member unwatches', method: 'DELETE', path: `/repos/${org}/open/subscription`, as: bob },
    { what: 'watch: team of one repo', method: 'POST', path: `${o}/teams`, as: alice, body: { name: 'one', permission: 'write', units }, save: 'one' },
    { what: 'watch: join team of one repo', method: 'PUT', path: (s) => `/teams/${s.one}/members/${bob}`, as: alice },
    { what: 'watch: repo added to team', method: 'PUT', path: (s) => `/teams/${s.one}/repos/${org}/open`, as: alice },
    { what: 'watch: watched again', method: 'GET', path: `/repos/${org}/open/subscription`, as: bob },
    { what: 'watch: open watchers', method: 'GET', path: `/repos/${org}/open/subscribers`, as: alice },
    { what: 'watch: leave includes-all team', method: 'DELETE', path: (s) => `/teams/${s.everything}/members/${bob}`, as: alice },
    { what: 'watch: subscriptions after leaving', method: 'GET', path: '/user/subscriptions', as: bob },
    { what: 'watch: private repo watchers after leaving', method: 'GET', path: `/repos/${org}/later/subscribers`, as: alice },
    { what: 'watch: repo removed from team', method: 'DELETE', path: (s) => `/teams/${s.one}/repos/${org}/open`, as: alice },
    { what: 'watch: public repo kept', method: 'GET', path: `/repos/${org}/open/subscription`, as: bob },
    { what: 'watch: team with members turns includes-all', method: 'PATCH', path: (s) => `/teams/${s.one}`, as: alice, body: { name: 'one', permission: 'write', units, includes_all_repositories: true } },
    { what: 'watch: subscriptions after includes-all', method: 'GET', path: '/user/subscriptions', as: bob },
    { what: 'watch: leave the organization', method: 'DELETE', path: `${o}/members/${bob}`, as: alice },
    { what: 'watch: subscriptions after leaving the organization', method: 'GET', path: '/user/subscriptions', as: bob },
    { what: 'watch: public repo after leaving the organization', method: 'GET', path: `/repos/${org}/open/subscription`, as: bob },
    { what: 'watch: collaborator added', method: 'PUT', path: `/repos/${alice}/proj/collaborators/${bob}`, as: alice, body: { permission: 'write' } },
    { what: 'watch: collaborator watches', method: 'PUT', path: `/repos/${alice}/proj/subscription`, as: bob },
    { what: 'watch: collaborator removed', method: 'DELETE', path: `/repos/${alice}/proj/collaborators/${bob}`, as: alice },
    { what: 'watch: public repo after collaboration ends', method: 'GET', path: `/repos/${alice}/proj/subscription`, as: bob },
  ];
}

/**
 * A pull request of its own repository: opened from a branch made through the contents API,
 * its files paged, .diff/.patch, commits, pinned, its timeline, refusals (an up-to-date head's
 * update is 409 in the forge where Gitea answers 500: a known, intended difference).
 */
function pullChecks(): Check[] {
  const { alice, bob } = users;
  const r = `/repos/${alice}/pr`;
  const file = (name: string, branch: string, from?: string) => ({ content: Buffer.from(`${name}\n`).toString('base64'), message: `add ${name}`, branch: from ?? branch, ...(from ? { new_branch: branch } : {}) });
  return [
    { what: 'pull: repo', method: 'POST', path: '/user/repos', as: alice, body: { name: 'pr', auto_init: true, default_branch: 'main' } },
    { what: 'pull: branch', method: 'POST', path: `${r}/contents/a.txt`, as: alice, body: file('a.txt', 'feat', 'main') },
    { what: 'pull: second file', method: 'POST', path: `${r}/contents/b.txt`, as: alice, body: file('b.txt', 'feat') },
    { what: 'pull: third file', method: 'POST', path: `${r}/contents/c.txt`, as: alice, body: file('c.txt', 'feat') },
    { what: 'pull: create', method: 'POST', path: `${r}/pulls`, as: alice, body: { head: 'feat', base: 'main', title: 'Compare' } },
    { what: 'pull: create again', method: 'POST', path: `${r}/pulls`, as: alice, body: { head: 'feat', base: 'main', title: 'Again' } },
    { what: 'pull: create missing head', method: 'POST', path: `${r}/pulls`, as: alice, body: { head: 'nope', base: 'main', title: 'x' }, message: true },
    { what: 'pull: get', method: 'GET', path: `${r}/pulls/1`, as: bob },
    { what: 'pull: list', method: 'GET', path: `${r}/pulls?state=all&limit=1`, as: bob },
    { what: 'pull: files page 1', method: 'GET', path: `${r}/pulls/1/files?limit=2&page=1`, as: bob },
    { what: 'pull: files page 2', method: 'GET', path: `${r}/pulls/1/files?limit=2&page=2`, as: bob },
    { what: 'pull: commits', method: 'GET', path: `${r}/pulls/1/commits?limit=1`, as: bob },
    { what: 'pull: diff', method: 'GET', path: `${r}/pulls/1.diff`, as: bob },
    { what: 'pull: patch', method: 'GET', path: `${r}/pulls/1.patch`, as: bob },
    { what: 'pull: update up to date', method: 'POST', path: `${r}/pulls/1/update`, as: alice },
    { what: 'pull: pin', method: 'POST', path: `${r}/issues/1/pin`, as: alice },
    { what: 'pull: pinned', method: 'GET', path: `${r}/pulls/pinned`, as: bob },
    { what: 'pull: timeline', method: 'GET', path: `${r}/issues/1/timeline`, as: bob },
    ...pullSurfaceChecks(),
    ...crossReferenceChecks(),
    ...reviewReferenceChecks(),
    ...teamPermissionChecks(),
    ...unitTeamRepoPermissionChecks(),
  ];
}

/**
 * Cross-references on the timeline: an issue's body, a comment, a commit made through the
 * contents API ("Fixes #1" on the default branch closes the issue) and a pull request's body
 * reference issues; each entry of the timelines is read on its own page.
 */
function crossReferenceChecks(): Check[] {
  const { alice, bob } = users;
  const r = `/repos/${alice}/xref`;
  const i = `${r}/issues`;
  const page = (n: number, entry: string, issue = 1): Check => ({ what: `xref: ${entry}`, method: 'GET', path: `${i}/${issue}/timeline?limit=1&page=${n}`, as: bob });
  return [
    { what: 'xref: repo', method: 'POST', path: '/user/repos', as: alice, body: { name: 'xref', auto_init: true, default_branch: 'main' } },
    { what: 'xref: target', method: 'POST', path: i, as: alice, body: { title: 'target' } },
    { what: 'xref: issue referencing it', method: 'POST', path: i, as: alice, body: { title: 'source', body: 'see #1 and `#3`' } },
    { what: 'xref: comment referencing it', method: 'POST', path: `${i}/2/comments`, as: alice, body: { body: 'also (#1).' } },
    { what: 'xref: second target', method: 'POST', path: i, as: alice, body: { title: 'second target' } },
    {
      what: 'xref: commit fixing it',
      method: 'POST',
      path: `${r}/contents/fix.txt`,
      as: alice,
      body: { content: Buffer.from('fix\n').toString('base64'), message: 'Fixes #1', branch: 'main' },
    },
    { what: 'xref: branch', method: 'POST', path: `${r}/contents/b.txt`, as: alice, body: { content: Buffer.from('b\n').toString('base64'), message: 'b', branch: 'main', new_branch: 'b' } },
    { what: 'xref: pull request fixing #3', method: 'POST', path: `${r}/pulls`, as: alice, body: { head: 'b', base: 'main', title: 'PR', body: 'fixes #3' } },
    { what: 'xref: timeline length', method: 'GET', path: `${i}/1/timeline?limit=50`, as: bob },
    page(1, 'issue_ref'),
    page(2, 'comment_ref'),
    page(3, 'commit_ref'),
    page(4, 'close by commit'),
    page(1, 'pull_ref', 3),
    { what: 'xref: target closed', method: 'GET', path: `${i}/1`, as: bob },
  ];
}

/**
 * The rest of the pull-request surface on one repository where bob may write: create with
 * assignees, label and milestone, refusals, get by branches, list filters and paging, edit,
 * requested reviewers, reviews (approve, request changes, pending then submitted, line
 * comments, dismiss, delete, refusals), the merge in several styles and its refusals,
 * a conflicted pull request, updates, and the pull request of a commit. Known, intended
 * differences: where Gitea answers 500 (an update with an unknown style, 422 here; a
 * fast-forward-only merge of a head that is behind, 405 or 409 here), and a merge right after
 * an update, which Gitea may refuse with 405 "Please try again later" while its checker runs.
 */
function pullSurfaceChecks(): Check[] {
  const { alice, bob } = users;
  const r = `/repos/${alice}/prm`;
  const p = `${r}/pulls`;
  const file = (name: string, branch: string, text = `${name}\n`) => ({ content: Buffer.from(text).toString('base64'), message: `add ${name}`, branch: 'main', new_branch: branch });
  const line = { path: 'one.txt', new_position: 1, body: 'line comment' };
  return [
    { what: 'pull more: repo', method: 'POST', path: '/user/repos', as: alice, body: { name: 'prm', auto_init: true, default_branch: 'main' } },
    { what: 'pull more: collaborator', method: 'PUT', path: `${r}/collaborators/${bob}`, as: alice, body: { permission: 'write' } },
    { what: 'pull more: label', method: 'POST', path: `${r}/labels`, as: alice, body: { name: 'bug', color: '#ee0701' }, save: 'label' },
    { what: 'pull more: milestone', method: 'POST', path: `${r}/milestones`, as: alice, body: { title: 'v1' }, save: 'milestone' },
    ...['one', 'two', 'three', 'four'].map((b): Check => ({ what: `pull more: branch ${b}`, method: 'POST', path: `${r}/contents/${b}.txt`, as: alice, body: file(`${b}.txt`, b) })),
    { what: 'pull more: conflicting branch', method: 'POST', path: `${r}/contents/same.txt`, as: alice, body: file('same.txt', 'conf', 'theirs\n') },
    { what: 'pull more: same file on main', method: 'POST', path: `${r}/contents/same.txt`, as: alice, body: { content: Buffer.from('ours\n').toString('base64'), message: 'ours', branch: 'main' } },
    {
      what: 'pull more: create with people',
      method: 'POST',
      path: p,
      as: alice,
      bodyOf: (s) => ({ head: 'one', base: 'main', title: 'One', body: 'first', assignees: [bob], labels: [s.label], milestone: s.milestone, due_date: '2030-01-02T03:04:05Z' }),
      saveField: 'head.sha',
      save: 'oneSha',
    },
    { what: 'pull more: create two', method: 'POST', path: p, as: alice, body: { head: 'two', base: 'main', title: 'Two' } },
    { what: 'pull more: create three', method: 'POST', path: p, as: bob, body: { head: 'three', base: 'main', title: 'Three' } },
    { what: 'pull more: create conflicted', method: 'POST', path: p, as: alice, body: { head: 'conf', base: 'main', title: 'Conflicted' } },
    { what: 'pull more: create head == base', method: 'POST', path: p, as: alice, body: { head: 'main', base: 'main', title: 'Same' }, message: true },
    { what: 'pull more: create missing base', method: 'POST', path: p, as: alice, body: { head: 'four', base: 'nope', title: 'x' }, message: true },
    { what: 'pull more: create without title', method: 'POST', path: p, as: alice, body: { head: 'four', base: 'main' } },
    { what: 'pull more: create by anonymous', method: 'POST', path: p, body: { head: 'four', base: 'main', title: 'x' } },
    { what: 'pull more: get by branches', method: 'GET', path: `${p}/main/one`, as: bob },
    { what: 'pull more: get by missing branches', method: 'GET', path: `${p}/main/nope`, as: bob },
    { what: 'pull more: get missing', method: 'GET', path: `${p}/999`, as: bob },
    { what: 'pull more: get not a number', method: 'GET', path: `${p}/x`, as: bob },
    { what: 'pull more: diff missing', method: 'GET', path: `${p}/999.diff`, as: bob },
    { what: 'pull more: pull of a commit', method: 'GET', path: (s) => `${r}/commits/${s.oneSha}/pull`, as: bob },
    { what: 'pull more: pull of a missing commit', method: 'GET', path: `${r}/commits/${'0'.repeat(40)}/pull`, as: bob },
    { what: 'pull more: list page 1', method: 'GET', path: `${p}?state=open&limit=2&page=1`, as: bob },
    { what: 'pull more: list page 2', method: 'GET', path: `${p}?state=open&limit=2&page=2`, as: bob },
    { what: 'pull more: list recentupdate', method: 'GET', path: `${p}?sort=recentupdate&limit=1`, as: bob },
    { what: 'pull more: list by label', method: 'GET', path: (s) => `${p}?labels=${s.label}`, as: bob },
    { what: 'pull more: list by milestone', method: 'GET', path: (s) => `${p}?milestone=${s.milestone}`, as: bob },
    { what: 'pull more: list by poster', method: 'GET', path: `${p}?poster=${bob}`, as: bob },
    { what: 'pull more: list bad state', method: 'GET', path: `${p}?state=nope`, as: bob },
    { what: 'pull more: list bad sort', method: 'GET', path: `${p}?sort=nope`, as: bob },
    { what: 'pull more: edit', method: 'PATCH', path: `${p}/2`, as: alice, body: { title: 'Two!', body: 'edited', assignees: [alice], due_date: '2031-01-01T00:00:00Z', allow_maintainer_edit: true } },
    { what: 'pull more: edit remove deadline', method: 'PATCH', path: `${p}/2`, as: alice, body: { unset_due_date: true } },
    { what: 'pull more: edit base missing', method: 'PATCH', path: `${p}/2`, as: alice, body: { base: 'nope' }, message: true },
    { what: 'pull more: edit by anonymous', method: 'PATCH', path: `${p}/1`, body: { title: 'x' } },
    { what: 'pull more: close', method: 'PATCH', path: `${p}/2`, as: alice, body: { state: 'closed' } },
    { what: 'pull more: reopen', method: 'PATCH', path: `${p}/2`, as: alice, body: { state: 'open' } },
    { what: 'pull more: request reviewer', method: 'POST', path: `${p}/1/requested_reviewers`, as: alice, body: { reviewers: [bob] } },
    { what: 'pull more: request unknown reviewer', method: 'POST', path: `${p}/1/requested_reviewers`, as: alice, body: { reviewers: [`nobody${run}`] } },
    { what: 'pull more: request poster', method: 'POST', path: `${p}/1/requested_reviewers`, as: alice, body: { reviewers: [alice] } },
    { what: 'pull more: request on two', method: 'POST', path: `${p}/2/requested_reviewers`, as: alice, body: { reviewers: [bob] } },
    { what: 'pull more: remove request', method: 'DELETE', path: `${p}/2/requested_reviewers`, as: alice, body: { reviewers: [bob] } },
    { what: 'pull more: remove missing request', method: 'DELETE', path: `${p}/2/requested_reviewers`, as: alice, body: { reviewers: [bob] } },
    { what: 'pull more: get with request', method: 'GET', path: `${p}/1`, as: bob },
    { what: 'pull more: reviews with request', method: 'GET', path: `${p}/1/reviews`, as: bob },
    { what: 'pull more: approve', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'APPROVED', body: 'fine', comments: [line] }, save: 'approval' },
    { what: 'pull more: approve own', method: 'POST', path: `${p}/1/reviews`, as: alice, body: { event: 'APPROVED', body: 'mine' }, message: true },
    { what: 'pull more: request changes without body', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'REQUEST_CHANGES' }, message: true },
    { what: 'pull more: unknown event', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'NOPE', body: 'x' } },
    { what: 'pull more: comment on unknown path', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'COMMENT', body: 'x', comments: [{ path: 'none.txt', new_position: 1, body: 'x' }] } },
    { what: 'pull more: request changes', method: 'POST', path: `${p}/2/reviews`, as: bob, body: { event: 'REQUEST_CHANGES', body: 'no' }, save: 'reject' },
    { what: 'pull more: pending', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'PENDING', body: 'later', comments: [line] }, save: 'pending' },
    { what: 'pull more: pending listed', method: 'GET', path: `${p}/1/reviews`, as: bob },
    { what: 'pull more: pending seen by the poster', method: 'GET', path: (s) => `${p}/1/reviews/${s.pending}`, as: alice },
    { what: 'pull more: second pending', method: 'POST', path: `${p}/1/reviews`, as: bob, body: { event: 'PENDING', body: 'again' } },
    { what: 'pull more: submit pending', method: 'POST', path: (s) => `${p}/1/reviews/${s.pending}`, as: bob, body: { event: 'COMMENT', body: 'now' } },
    { what: 'pull more: submit again', method: 'POST', path: (s) => `${p}/1/reviews/${s.pending}`, as: bob, body: { event: 'COMMENT', body: 'again' } },
    { what: 'pull more: reviews', method: 'GET', path: `${p}/1/reviews?limit=1`, as: alice },
    { what: 'pull more: review', method: 'GET', path: (s) => `${p}/1/reviews/${s.approval}`, as: alice },
    { what: 'pull more: review of another pull', method: 'GET', path: (s) => `${p}/2/reviews/${s.approval}`, as: alice },
    { what: 'pull more: review missing', method: 'GET', path: `${p}/1/reviews/999999`, as: alice },
    { what: 'pull more: review comments', method: 'GET', path: (s) => `${p}/1/reviews/${s.approval}/comments`, as: alice },
    { what: 'pull more: dismiss', method: 'POST', path: (s) => `${p}/1/reviews/${s.approval}/dismissals`, as: alice, body: { message: 'stale' } },
    { what: 'pull more: dismiss by its reviewer', method: 'POST', path: (s) => `${p}/2/reviews/${s.reject}/dismissals`, as: bob, body: { message: 'mine' } },
    { what: 'pull more: dismissed', method: 'GET', path: (s) => `${p}/1/reviews/${s.approval}`, as: alice },
    { what: 'pull more: undismiss', method: 'POST', path: (s) => `${p}/1/reviews/${s.approval}/undismissals`, as: alice },
    { what: 'pull more: delete by another', method: 'DELETE', path: (s) => `${p}/2/reviews/${s.reject}`, as: alice },
    { what: 'pull more: delete request changes', method: 'DELETE', path: (s) => `${p}/2/reviews/${s.reject}`, as: bob },
    { what: 'pull more: deleted', method: 'GET', path: (s) => `${p}/2/reviews/${s.reject}`, as: bob },
    { what: 'pull more: merged?', method: 'GET', path: `${p}/1/merge`, as: bob },
    { what: 'pull more: merge unknown style', method: 'POST', path: `${p}/1/merge`, as: alice, body: { Do: 'nope' } },
    { what: 'pull more: merge wrong head', method: 'POST', path: `${p}/1/merge`, as: alice, body: { Do: 'merge', head_commit_id: '1'.repeat(40) }, message: true },
    { what: 'pull more: merge by anonymous', method: 'POST', path: `${p}/1/merge`, body: { Do: 'merge' } },
    { what: 'pull more: squash', method: 'POST', path: `${p}/1/merge`, as: alice, body: { Do: 'squash', MergeTitleField: 'Squashed', delete_branch_after_merge: true } },
    { what: 'pull more: merged', method: 'GET', path: `${p}/1/merge`, as: bob },
    { what: 'pull more: merged pull', method: 'GET', path: `${p}/1`, as: bob },
    { what: 'pull more: merge again', method: 'POST', path: `${p}/1/merge`, as: alice, body: { Do: 'merge' } },
    { what: 'pull more: edit merged', method: 'PATCH', path: `${p}/1`, as: alice, body: { state: 'closed' } },
    { what: 'pull more: update behind', method: 'POST', path: `${p}/2/update`, as: alice },
    { what: 'pull more: update by rebase', method: 'POST', path: `${p}/3/update?style=rebase`, as: alice },
    { what: 'pull more: update unknown style', method: 'POST', path: `${p}/3/update?style=nope`, as: alice },
    { what: 'pull more: rebase', method: 'POST', path: `${p}/2/merge`, as: alice, body: { Do: 'rebase' } },
    { what: 'pull more: conflicted pull', method: 'GET', path: `${p}/4`, as: bob },
    { what: 'pull more: merge conflicted', method: 'POST', path: `${p}/4/merge`, as: alice, body: { Do: 'merge' } },
    { what: 'pull more: fast-forward-only behind', method: 'POST', path: `${p}/3/merge`, as: alice, body: { Do: 'fast-forward-only' } },
    { what: 'pull more: auto-merge', method: 'POST', path: `${p}/3/merge`, as: alice, body: { Do: 'merge', merge_when_checks_succeed: true } },
    { what: 'pull more: cancel auto-merge', method: 'DELETE', path: `${p}/3/merge`, as: alice },
    { what: 'pull more: cancel missing auto-merge', method: 'DELETE', path: `${p}/3/merge`, as: alice },
    { what: 'pull more: manually merged', method: 'POST', path: `${p}/3/merge`, as: alice, body: { Do: 'manually-merged' } },
    { what: 'pull more: list closed', method: 'GET', path: `${p}?state=closed`, as: bob },
    { what: 'pull more: timeline', method: 'GET', path: `${r}/issues/1/timeline?limit=50`, as: bob, listValues: ['type'] },
  ];
}

/**
 * Cross-references from a pull request's reviews: a submitted review's body, its line
 * comments, a pending review's line comment and a reply to a line comment each reference an
 * issue; the issues' timelines (types, ref_action, whether a ref_comment is embedded) and states
 * are compared after the merge.
 */
function reviewReferenceChecks(): Check[] {
  const { alice, bob } = users;
  const r = `/repos/${alice}/xrev`;
  const i = `${r}/issues`;
  const listValues = ['type', 'ref_action'];
  const timeline = (n: number): Check => ({ what: `xrev: timeline of #${n}`, method: 'GET', path: `${i}/${n}/timeline?limit=50`, as: bob, listValues });
  const file = { content: Buffer.from('one\ntwo\n').toString('base64'), message: 'b', branch: 'main', new_branch: 'b' };
  return [
    { what: 'xrev: repo', method: 'POST', path: '/user/repos', as: alice, body: { name: 'xrev', auto_init: true, default_branch: 'main' } },
    ...[1, 2, 3, 4].map((n): Check => ({ what: `xrev: target ${n}`, method: 'POST', path: i, as: alice, body: { title: `target ${n}` } })),
    { what: 'xrev: branch', method: 'POST', path: `${r}/contents/b.txt`, as: alice, body: file },
    { what: 'xrev: pull request', method: 'POST', path: `${r}/pulls`, as: alice, body: { head: 'b', base: 'main', title: 'PR' } },
    { what: 'xrev: target 6', method: 'POST', path: i, as: alice, body: { title: 'target 6' } },
    {
      what: 'xrev: review with a line comment',
      method: 'POST',
      path: `${r}/pulls/5/reviews`,
      as: alice,
      body: { event: 'COMMENT', body: 'review body closes #1', comments: [{ path: 'b.txt', new_position: 1, body: 'line comment mentions #2' }] },
      save: 'review',
    },
    { what: 'xrev: pending review', method: 'POST', path: `${r}/pulls/5/reviews`, as: alice, body: { event: 'PENDING', body: 'pending', comments: [{ path: 'b.txt', new_position: 2, body: 'pending line mentions #3' }] }, save: 'pending' },
    timeline(1),
    timeline(2),
    timeline(3),
    { what: 'xrev: review comments', method: 'GET', path: (s) => `${r}/pulls/5/reviews/${s.review}/comments`, as: bob, save: 'line' },
    { what: 'xrev: reply to the line comment', method: 'POST', path: (s) => `${r}/pulls/5/comments/${s.line}/replies`, as: alice, body: { body: 'reply mentions #6' } },
    timeline(6),
    { what: 'xrev: submit pending', method: 'POST', path: (s) => `${r}/pulls/5/reviews/${s.pending}`, as: alice, body: { event: 'COMMENT', body: 'submitted mentions #4' } },
    timeline(3),
    timeline(4),
    { what: 'xrev: merge', method: 'POST', path: `${r}/pulls/5/merge`, as: alice, body: { Do: 'merge' } },
    { what: 'xrev: #1 after the merge', method: 'GET', path: `${i}/1`, as: bob, values: ['state'] },
    timeline(1),
  ];
}

/**
 * Teams as Gitea 1.27 stores them: a unit team's own permission is none, its units carry the
 * modes (units_map wins over units), an admin team has every unit; the values are compared.
 */
function teamPermissionChecks(): Check[] {
  const { alice } = users;
  const o = `/orgs/${org}/teams`;
  const values = ['permission', 'units_map'];
  const team = (what: string, body: Record<string, unknown>, save?: string): Check => ({ what: `team perm: ${what}`, method: 'POST', path: o, as: alice, body, values, save });
  return [
    team('write with units', { name: 'tw', permission: 'write', units: ['repo.code', 'repo.issues'] }, 'tw'),
    team('read with units_map', { name: 'tr', permission: 'read', units_map: { 'repo.code': 'write', 'repo.issues': 'read' } }),
    team('units_map wins over units', { name: 'tm', permission: 'write', units: ['repo.code'], units_map: { 'repo.issues': 'write' } }),
    team('owner asked', { name: 'to', permission: 'owner', units: ['repo.code'] }),
    team('admin', { name: 'ta', permission: 'admin', units: ['repo.code'] }),
    team('units_map with none', { name: 'tn', units_map: { 'repo.code': 'none', 'repo.wiki': 'write' } }),
    { what: 'team perm: get', method: 'GET', path: (s) => `/teams/${s.tw}`, as: alice, values },
    { what: 'team perm: edit units', method: 'PATCH', path: (s) => `/teams/${s.tw}`, as: alice, body: { name: 'tw', units_map: { 'repo.pulls': 'write' } }, values },
    { what: 'team perm: edit permission only', method: 'PATCH', path: (s) => `/teams/${s.tw}`, as: alice, body: { name: 'tw', permission: 'read' }, values },
  ];
}

/**
 * A repository's `permissions` for members of unit teams: Gitea takes push and pull from the
 * code unit's mode and admin from the team's own mode, in the repository JSON and in every
 * list that embeds it; an owner of a repository without the code unit has neither push nor pull.
 */
function unitTeamRepoPermissionChecks(): Check[] {
  const { alice, bob } = users;
  const o = `/orgs/${org}`;
  const values = ['permissions'];
  const inList = (what: string, path: string): Check => ({ what: `unit perm: ${what}`, method: 'GET', path, as: bob, itemValues: values });
  const checks: Check[] = [
    { what: 'unit perm: repo', method: 'POST', path: `${o}/repos`, as: alice, body: { name: 'units', private: true } },
    { what: 'unit perm: second repo', method: 'POST', path: `${o}/repos`, as: alice, body: { name: 'units2', private: true } },
    { what: 'unit perm: code write, issues read', method: 'POST', path: `${o}/teams`, as: alice, body: { name: 'ucw', units_map: { 'repo.code': 'write', 'repo.issues': 'read' } }, save: 'ucw' },
    { what: 'unit perm: code read, issues admin', method: 'POST', path: `${o}/teams`, as: alice, body: { name: 'ucr', units_map: { 'repo.code': 'read', 'repo.issues': 'admin' } }, save: 'ucr' },
    { what: 'unit perm: no code', method: 'POST', path: `${o}/teams`, as: alice, body: { name: 'unc', units_map: { 'repo.issues': 'write', 'repo.wiki': 'write' } }, save: 'unc' },
    { what: 'unit perm: join ucw', method: 'PUT', path: (s) => `/teams/${s.ucw}/members/${bob}`, as: alice },
    { what: 'unit perm: units to ucw', method: 'PUT', path: (s) => `/teams/${s.ucw}/repos/${org}/units`, as: alice },
    { what: 'unit perm: join unc', method: 'PUT', path: (s) => `/teams/${s.unc}/members/${bob}`, as: alice },
    { what: 'unit perm: units2 to unc', method: 'PUT', path: (s) => `/teams/${s.unc}/repos/${org}/units2`, as: alice },
    { what: 'unit perm: get code write', method: 'GET', path: `/repos/${org}/units`, as: bob, values },
    { what: 'unit perm: get no code', method: 'GET', path: `/repos/${org}/units2`, as: bob, values },
    inList('my repos', '/user/repos?limit=50'),
    inList('search', `/repos/search?q=units&limit=50`),
    inList('org repos', `${o}/repos?limit=50`),
    { what: 'unit perm: leave ucw', method: 'DELETE', path: (s) => `/teams/${s.ucw}/members/${bob}`, as: alice },
    { what: 'unit perm: join ucr', method: 'PUT', path: (s) => `/teams/${s.ucr}/members/${bob}`, as: alice },
    { what: 'unit perm: units to ucr', method: 'PUT', path: (s) => `/teams/${s.ucr}/repos/${org}/units`, as: alice },
    { what: 'unit perm: get code read', method: 'GET', path: `/repos/${org}/units`, as: bob, values },
    { what: 'unit perm: code unit off', method: 'PATCH', path: `/repos/${alice}/proj`, as: alice, body: { has_code: false } },
    { what: 'unit perm: owner without code unit', method: 'GET', path: `/repos/${alice}/proj`, as: alice, values },
    { what: 'unit perm: code unit on', method: 'PATCH', path: `/repos/${alice}/proj`, as: alice, body: { has_code: true } },
  ];
  return checks;
}

/** Issue assignees, locks, subscriptions and the cross-repository search. */
function issueExtraChecks(r: string): Check[] {
  const { alice, bob } = users;
  const i = `${r}/issues`;
  return [
    { what: 'assignees add', method: 'POST', path: `${i}/2/assignees`, as: alice, body: { assignees: [alice] } },
    { what: 'assignees add unknown', method: 'POST', path: `${i}/2/assignees`, as: alice, body: { assignees: [`nobody${run}`] } },
    { what: 'assignees remove', method: 'DELETE', path: `${i}/2/assignees`, as: alice, body: { assignees: [alice] } },
    { what: 'assignees by reader', method: 'POST', path: `${i}/2/assignees`, as: bob, body: { assignees: [bob] } },
    { what: 'lock', method: 'PUT', path: `${i}/2/lock`, as: alice, body: { lock_reason: 'off-topic' } },
    { what: 'locked: comment by reader', method: 'POST', path: `${i}/2/comments`, as: bob, body: { body: 'locked?' } },
    { what: 'lock by reader', method: 'PUT', path: `${i}/2/lock`, as: bob, body: { lock_reason: 'spam' } },
    { what: 'unlock', method: 'DELETE', path: `${i}/2/lock`, as: alice },
    { what: 'subscriptions', method: 'GET', path: `${i}/1/subscriptions`, as: alice },
    { what: 'subscribe', method: 'PUT', path: `${i}/1/subscriptions/${bob}`, as: bob },
    { what: 'subscribe someone else', method: 'PUT', path: `${i}/1/subscriptions/${alice}`, as: bob },
    { what: 'subscription check', method: 'GET', path: `${i}/1/subscriptions/check`, as: bob },
    { what: 'unsubscribe', method: 'DELETE', path: `${i}/1/subscriptions/${bob}`, as: bob },
    { what: 'issue search', method: 'GET', path: `/repos/issues/search?q=first&limit=1`, as: bob },
    { what: 'issue search by state', method: 'GET', path: `/repos/issues/search?state=all&type=issues&owner=${alice}`, as: bob },
    { what: 'issue search anonymous', method: 'GET', path: `/repos/issues/search?q=first` },
    { what: 'issue timeline after extras', method: 'GET', path: `${i}/2/timeline?limit=50`, as: alice },
  ];
}

/** Badges and unadopted repositories (site admins). */
function adminChecks(): Check[] {
  const { bob } = users;
  return [
    { what: 'badges', method: 'GET', path: `/admin/users/${bob}/badges`, as: 'admin' },
    { what: 'badge add unknown', method: 'POST', path: `/admin/users/${bob}/badges`, as: 'admin', body: { badge_slugs: [`none${run}`] } },
    { what: 'badge delete unknown', method: 'DELETE', path: `/admin/users/${bob}/badges`, as: 'admin', body: { badge_slugs: [`none${run}`] } },
    { what: 'badges not admin', method: 'GET', path: `/admin/users/${bob}/badges`, as: bob },
    { what: 'unadopted', method: 'GET', path: '/admin/unadopted', as: 'admin' },
    { what: 'unadopted adopt missing', method: 'POST', path: `/admin/unadopted/${bob}/nothing`, as: 'admin' },
    { what: 'unadopted delete missing', method: 'DELETE', path: `/admin/unadopted/${bob}/nothing`, as: 'admin' },
  ];
}

async function main(): Promise<number> {
  const gitea: Side = { name: 'gitea', base: arg('gitea').replace(/\/$/, ''), tokens: {}, saved: {} };
  const forge: Side = { name: 'forge', base: arg('forge').replace(/\/$/, ''), tokens: {}, saved: {} };
  await setUp(gitea);
  await setUp(forge);
  let differing = 0;
  for (const c of checks()) {
    if (only && !only.test(c.what)) continue;
    const opts = (side: Side) => ({ as: c.as, body: c.bodyOf ? c.bodyOf(side.saved) : c.body, raw: c.raw, contentType: c.contentType });
    const pathOf = (side: Side) => (typeof c.path === 'string' ? c.path : c.path(side.saved));
    const [g, f] = [await send(gitea, c.method, pathOf(gitea), opts(gitea)), await send(forge, c.method, pathOf(forge), opts(forge))];
    if (c.save) {
      for (const [side, a] of [[gitea, g], [forge, f]] as const) {
        // A list's first item stands for the list.
        const item = (Array.isArray(a.body) ? a.body[0] : a.body) as Record<string, unknown> | undefined;
        const value = (c.saveField ?? 'id').split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), item);
        if (typeof value === 'number' || typeof value === 'string') side.saved[c.save] = value;
      }
    }
    const diffs = compare(g, f, c.message, c.values, c.itemValues, c.listValues);
    const where = `${c.method} ${pathOf(gitea).replace(run, '*')}`;
    if (!diffs.length) {
      console.log(`same  ${c.what} (${where}: ${g.status})`);
      continue;
    }
    differing++;
    console.log(`DIFF  ${c.what} (${where})`);
    for (const d of diffs) console.log(`        ${d}`);
  }
  console.log(`${differing} of ${checks().filter((c) => !only || only.test(c.what)).length} requests answered differently`);
  return differing ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
