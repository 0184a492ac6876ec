/**
 * Hostile input, swept over every operation of the OpenAPI document on both databases:
 *  - integers out of range: every numeric path parameter at 2^31 and 2^63+1 is a 404 (the
 *    object does not exist), never a 500; body integers beyond int64 are 422;
 *  - text: a NUL in any string of a JSON body is a 422, a NUL in the path or query a 400; a
 *    lone UTF-16 surrogate is stored as U+FFFD (as Go's decoder does) or refused, never a 500;
 *  - authentication before validation: an anonymous request with a bad body is a 401 wherever
 *    the route needs a signed-in user; anonymous sudo is a 403;
 *  - JSON nested deeper than Go's decoder allows (10,000 levels) is a 4xx, as Gitea refuses it,
 *    whether sent as JSON or as text/plain; nesting within the limit is never a 5xx;
 *  - a NUL in a multipart upload's file name is a 422 as in any other text (PostgreSQL cannot
 *    store it);
 *  - a 500 shows nothing of the server's internals.
 */
import { describeForge, PASSWORD, type Forge } from './support/forge';

jest.setTimeout(300_000);

interface Param {
  name: string;
  in: string;
  type?: string;
  required?: boolean;
  schema?: Schema;
}
interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
}
interface Operation {
  method: string;
  path: string;
  params: Param[];
  security?: unknown[];
}

const NUMERIC = /^(id|index|attachment_id|.*_id)$/;

async function operations(f: Forge): Promise<{ ops: Operation[]; definitions: Record<string, Schema> }> {
  const doc = (await f.request('GET', `${f.url}/swagger.v1.json`)).body;
  const ops: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: Param[] }>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      ops.push({ method: method.toUpperCase(), path: p, params: op.parameters ?? [] });
    }
  }
  return { ops, definitions: doc.definitions ?? {} };
}

function resolve(schema: Schema | undefined, defs: Record<string, Schema>): Schema {
  if (!schema) return {};
  if (schema.$ref) return resolve(defs[schema.$ref.replace('#/definitions/', '')], defs);
  return schema;
}

/** Path values that reach the handlers: the fixtures created in beforeAll. */
const PATH_VALUES: Record<string, string> = { owner: 'alice', repo: 'r', org: 'sweeporg', username: 'alice', user: 'alice', index: '1', id: '1', name: 'Default', task: 'nothing' };

function fillPath(p: string, override: (name: string) => string | undefined = () => undefined): string {
  return p.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(override(name) ?? PATH_VALUES[name] ?? 'x'));
}

/** A body that passes the schema: required fields with plain values. */
function sampleBody(schema: Schema, defs: Record<string, Schema>): Record<string, unknown> {
  const s = resolve(schema, defs);
  const out: Record<string, unknown> = {};
  for (const [k, v0] of Object.entries(s.properties ?? {})) {
    const v = resolve(v0, defs);
    if (!(s.required ?? []).includes(k)) continue;
    out[k] = sampleValue(v);
  }
  return out;
}

function sampleValue(v: Schema): unknown {
  const type = Array.isArray(v.type) ? v.type[0] : v.type;
  if (v.enum?.length) return v.enum[0];
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return {};
  return 'sample';
}

function stringFields(schema: Schema, defs: Record<string, Schema>): string[] {
  const s = resolve(schema, defs);
  return Object.entries(s.properties ?? {})
    .filter(([, v]) => {
      const t = resolve(v, defs).type;
      return t === 'string' || (Array.isArray(t) && t.includes('string'));
    })
    .map(([k]) => k);
}

function integerFields(schema: Schema, defs: Record<string, Schema>): string[] {
  const s = resolve(schema, defs);
  return Object.entries(s.properties ?? {})
    .filter(([, v]) => {
      const t = resolve(v, defs).type;
      return t === 'integer' || (Array.isArray(t) && t.includes('integer'));
    })
    .map(([k]) => k);
}

describeForge('hostile input over every operation', (f) => {
  // A token, not the password: a password costs a key derivation per request, and the sweep
  // sends thousands of requests.
  const root: { basic?: [string, string] } = {};
  let ops: Operation[] = [];
  let defs: Record<string, Schema> = {};

  beforeAll(async () => {
    await f().user('root', { admin: true });
    await f().user('alice');
    const alice = { basic: ['alice', PASSWORD] as [string, string] };
    expect((await f().request('POST', '/user/repos', { ...alice, body: { name: 'r', auto_init: true } })).status).toBe(201);
    expect((await f().request('POST', '/repos/alice/r/issues', { ...alice, body: { title: 'one' } })).status).toBe(201);
    expect((await f().request('POST', '/orgs', { basic: ['root', PASSWORD], body: { username: 'sweeporg' } })).status).toBe(201);
    root.basic = [await f().token('root', ['all']), ''];
    ({ ops, definitions: defs } = await operations(f()));
    expect(ops.length).toBeGreaterThan(100);
  });

  test('numeric path parameters at 2^31 and 2^63+1: 404 for reads, never a 5xx', async () => {
    const failures: string[] = [];
    let tried = 0;
    for (const op of ops) {
      // A git hook's {id} is its name (pre-receive, update...), not a number.
      if (op.path.includes('/hooks/git/')) continue;
      const numeric = op.params.filter((p) => p.in === 'path' && (p.type === 'integer' || NUMERIC.test(p.name)));
      if (!numeric.length) continue;
      for (const big of ['2147483648', '9223372036854775809']) {
        const url = fillPath(op.path, (name) => (numeric.some((p) => p.name === name) ? big : undefined));
        const res = await f().request(op.method, url, { ...root, body: ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined });
        tried++;
        if (res.status >= 500 || (op.method === 'GET' && res.status !== 404)) failures.push(`${op.method} ${url} -> ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(tried).toBeGreaterThan(50);
    expect(failures).toEqual([]);
  });

  test('integers beyond int64 in a JSON body are 422, never 5xx', async () => {
    const failures: string[] = [];
    for (const op of ops) {
      const bodyParam = op.params.find((p) => p.in === 'body');
      if (!bodyParam?.schema) continue;
      for (const field of integerFields(bodyParam.schema, defs)) {
        // The field is left out of the sample: a required one would come again later in the
        // text, and JSON's last duplicate wins.
        const sample = sampleBody(bodyParam.schema, defs);
        delete sample[field];
        const body = JSON.stringify(sample).replace(/^\{/, `{"${field}":9223372036854775809,`).replace(/,\}$/, '}');
        const res = await f().request(op.method, fillPath(op.path), { ...root, raw: body });
        if (res.status >= 500 || res.status < 400) failures.push(`${op.method} ${op.path} ${field} -> ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('a NUL in any string of a JSON body is 422; a lone surrogate never gives a 5xx', async () => {
    const failures: string[] = [];
    let tried = 0;
    for (const op of ops) {
      const bodyParam = op.params.find((p) => p.in === 'body');
      if (!bodyParam?.schema) continue;
      for (const field of stringFields(bodyParam.schema, defs)) {
        const base = sampleBody(bodyParam.schema, defs);
        const nul = await f().request(op.method, fillPath(op.path), { ...root, body: { ...base, [field]: 'a\u0000b' } });
        tried++;
        if (nul.status !== 422 && nul.status !== 404 && nul.status !== 403) failures.push(`NUL ${op.method} ${op.path} ${field} -> ${nul.status} ${nul.text.slice(0, 120)}`);
        // JSON.stringify writes a lone surrogate as the escape \ud800, as an attacker would.
        const sur = await f().request(op.method, fillPath(op.path), { ...root, body: { ...base, [field]: 'a\ud800b' } });
        if (sur.status >= 500) failures.push(`surrogate ${op.method} ${op.path} ${field} -> ${sur.status} ${sur.text.slice(0, 120)}`);
      }
    }
    expect(tried).toBeGreaterThan(50);
    expect(failures).toEqual([]);
  });

  test('JSON nested 10,000 or 200,000 levels, as JSON or as text/plain, is never a 5xx; too deep or of the wrong shape it is a 4xx', async () => {
    const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    // Arrays where an object is expected, and anything beyond Go's depth limit, are refused; an
    // object nested within the limit is a body with an unknown field, which Gitea ignores.
    const shapes: { name: string; text: string; refused: boolean; contentType: string }[] = [
      { name: 'arrays 10,000 deep', text: arrays(10_000), refused: true, contentType: 'application/json' },
      { name: 'objects 10,000 deep', text: objects(10_000), refused: false, contentType: 'application/json' },
      { name: 'arrays 200,000 deep', text: arrays(200_000), refused: true, contentType: 'application/json' },
      { name: 'objects 10,001 deep', text: objects(10_001), refused: true, contentType: 'application/json' },
      { name: 'arrays 200,000 deep as text', text: arrays(200_000), refused: true, contentType: 'text/plain' },
      { name: 'objects 10,000 deep as text', text: objects(10_000), refused: false, contentType: 'text/plain' },
    ];
    const failures: string[] = [];
    let tried = 0;
    for (const op of ops) {
      const bodyParam = op.params.find((p) => p.in === 'body');
      // Bodies that are text by definition (/markdown/raw renders whatever it is sent) are not JSON.
      if (!bodyParam || op.method === 'GET' || resolve(bodyParam.schema, defs).type === 'string') continue;
      for (const shape of shapes) {
        const res = await f().request(op.method, fillPath(op.path), { ...root, raw: shape.text, contentType: shape.contentType });
        tried++;
        if (res.status >= 500 || (shape.refused && res.status < 400)) failures.push(`${shape.name} ${op.method} ${op.path} -> ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(tried).toBeGreaterThan(300);
    expect(failures).toEqual([]);
    // Gitea's answer to JSON beyond the limit.
    const deep = await f().request('POST', '/repos/alice/r/issues', { ...root, raw: arrays(200_000) });
    expect(deep.status).toBe(422);
    expect(deep.body.message).toBe("[]: invalid character '[' exceeded max depth");
  });

  test('a NUL in the file name of a multipart upload is a 422, as in a JSON string', async () => {
    const upload = (p: string, filename: string) =>
      f().request('POST', p, {
        ...root,
        contentType: 'multipart/form-data; boundary=XBOUNDARY',
        raw: `--XBOUNDARY\r\nContent-Disposition: form-data; name="attachment"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XBOUNDARY--\r\n`,
      });
    const rel = await f().request('POST', '/repos/alice/r/releases', { ...root, body: { tag_name: 'v-nul', name: 'nul' } });
    expect(rel.status).toBe(201);
    for (const p of ['/repos/alice/r/issues/1/assets', `/repos/alice/r/releases/${rel.body.id}/assets`]) {
      const bad = await upload(p, 'a\u0000b.txt');
      expect({ p, status: bad.status, message: bad.body?.message }).toEqual({ p, status: 422, message: '[Attachment]: Text' });
      const good = await upload(p, 'ab.txt');
      expect({ p, status: good.status, name: good.body?.name }).toEqual({ p, status: 201, name: 'ab.txt' });
    }
  });

  test('a lone surrogate is stored as U+FFFD, as Gitea stores it', async () => {
    const res = await f().request('POST', '/repos/alice/r/issues', { ...root, raw: '{"title":"bad \\ud800 text","body":"x\\udc00"}' });
    expect(res.status).toBe(201);
    expect(res.body.title).toBe('bad \ufffd text');
    expect(res.body.body).toBe('x\ufffd');
  });

  test('a NUL in the path or the query is a 400 on every read', async () => {
    const failures: string[] = [];
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const inQuery = await f().request('GET', `${fillPath(op.path)}?q=a%00b&page=1`, root);
      if (inQuery.status !== 400) failures.push(`query ${op.path} -> ${inQuery.status}`);
      if (op.path.includes('{')) {
        const inPath = await f().request('GET', fillPath(op.path, () => 'a\u0000b'), root);
        if (inPath.status !== 400) failures.push(`path ${op.path} -> ${inPath.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('anonymous requests with a bad body are 401 where the route needs a user, never 422', async () => {
    const failures: string[] = [];
    // Reads that take a body answer anonymous callers of a public repository: their 422 is right.
    const anonymousReads = new Set(['POST /repos/{owner}/{repo}/file-contents']);
    for (const op of ops.filter((o) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(o.method) && !anonymousReads.has(`${o.method} ${o.path}`))) {
      const res = await f().request(op.method, fillPath(op.path), { raw: '{"title": 12, "name": [', contentType: 'application/json' });
      if (res.status === 422 || res.status >= 500) failures.push(`${op.method} ${op.path} -> ${res.status} ${res.text.slice(0, 100)}`);
    }
    expect(failures).toEqual([]);
    const res = await f().request('POST', '/repos/alice/r/issues', { raw: '{"title": 12}' });
    expect(res.status).toBe(401);
  });

  test('sudo: anonymous and non-admin callers get 403 with Gitea\'s message; unknown users 404', async () => {
    for (const opts of [{}, { basic: ['alice', PASSWORD] as [string, string] }]) {
      let res = await f().request('GET', '/version?sudo=root', opts);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'Only administrators allowed to sudo.' });
      res = await f().request('GET', '/user', { ...opts, headers: { Sudo: 'root' } });
      expect(res.status).toBe(403);
    }
    expect((await f().request('GET', '/user?sudo=nobody-here', root)).status).toBe(404);
    const res = await f().request('GET', '/user?sudo=alice', root);
    expect(res.status).toBe(200);
    expect(res.body.login).toBe('alice');
  });

  test('a token cannot mint a token broader than itself; a public-only one passes public-only on', async () => {
    const narrow = await f().token('alice', ['write:user']);
    const asToken = { basic: [narrow, ''] as [string, string] };
    let res = await f().request('POST', '/users/alice/tokens', { ...asToken, body: { name: 'wider', scopes: ['write:user', 'read:repository'] } });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('cannot create an access token with a broader scope than the authenticating token');
    res = await f().request('POST', '/users/alice/tokens', { ...asToken, body: { name: 'all', scopes: ['all'] } });
    expect(res.status).toBe(403);
    res = await f().request('POST', '/users/alice/tokens', { ...asToken, body: { name: 'same', scopes: ['read:user'] } });
    expect(res.status).toBe(201);
    res = await f().request('POST', '/users/alice/tokens', { ...asToken, body: { name: 'equal', scopes: ['write:user'] } });
    expect(res.status).toBe(201);

    const pub = await f().token('alice', ['public-only', 'write:user', 'read:repository']);
    res = await f().request('POST', '/users/alice/tokens', { basic: [pub, ''], body: { name: 'child', scopes: ['read:repository'] } });
    expect(res.status).toBe(201);
    expect(res.body.scopes).toEqual(['public-only', 'read:repository']);
  });

  test('a 500 shows nothing of the server: Gitea\'s generic body', async () => {
    // Break the database under the server: the labels table disappears.
    await f().app.prisma.$executeRawUnsafe('DROP TABLE "IssueLabel"');
    await f().app.prisma.$executeRawUnsafe('DROP TABLE "Label"');
    for (const opts of [{}, root]) {
      const res = await f().request('GET', '/repos/alice/r/labels', opts);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ message: '', url: `${f().url}/api/swagger` });
      expect(res.text).not.toMatch(/prisma|\/work\/|node_modules|Label|SELECT|invocation/i);
    }
  });
});
