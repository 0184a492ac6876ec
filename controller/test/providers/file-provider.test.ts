import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse } from 'yaml';
import { FileProvider, parseManifestText, writeFileAtomic } from '../../src/providers/file';
import type { Logger } from '../../src/log';
import { parseManifests } from '../../src/resources';
import { renderStatusYaml, type StatusEntry, type StatusYamlCache } from '../../src/providers/file/status-file';
import { stateFileText, type ResourceRecord } from '../../src/providers/file/state';

interface Logged {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

function memoryLogger(): Logger & { lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const route = (name: string, path = '/a', extra = '') => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: ${name}
${extra}spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
`;

describe('file provider', () => {
  let dir: string;
  let manifests: string;
  let state: string;
  let clock: number;
  const now = () => new Date(Date.UTC(2026, 0, 1, 0, 0, clock)).toISOString();

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'provider-'));
    manifests = path.join(dir, 'manifests');
    state = path.join(dir, 'state');
    await fs.mkdir(manifests);
    clock = 0;
  });
  const opened: FileProvider[] = [];
  afterEach(async () => {
    // resources.json is saved in the background of a scan: let those writes end first.
    for (const p of opened.splice(0)) await p.flush().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });

  const open = async (log = memoryLogger()) => {
    const p = new FileProvider({ manifestsDir: manifests, stateDir: state, log, now });
    opened.push(p);
    await p.open();
    return p;
  };
  /** One scan by a provider that then stops as the controller does (its state saved). */
  const scanAndStop = async () => {
    const p = await open();
    const docs = await p.scan();
    await p.flush();
    p.close();
    return docs;
  };
  const meta = (docs: { doc: unknown }[], name: string) =>
    (docs.find((d) => (d.doc as any).metadata?.name === name)?.doc as any)?.metadata;

  test('reads every document of every .yaml/.yml file, subfolders included, and nothing else', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1') + '---\n' + route('r2'));
    await fs.mkdir(path.join(manifests, 'sub'));
    await fs.writeFile(path.join(manifests, 'sub', 'b.yml'), route('r3'));
    await fs.writeFile(path.join(manifests, 'notes.txt'), route('r4'));
    await fs.writeFile(path.join(manifests, '.hidden.yaml'), route('r5'));
    const docs = await (await open()).scan();
    expect(docs.map((d) => (d.doc as any).metadata.name).sort()).toEqual(['r1', 'r2', 'r3']);
    expect(docs.find((d) => (d.doc as any).metadata.name === 'r2')!.source).toMatch(/^a\.yaml:\d+$/);
  });

  test('generation starts at 1 and grows only when the spec changes', async () => {
    const p = await open();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    expect(meta(await p.scan(), 'r1').generation).toBe(1);
    // Labels are metadata: no new generation.
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/a', '  labels: { team: x }\n'));
    expect(meta(await p.scan(), 'r1').generation).toBe(1);
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b'));
    expect(meta(await p.scan(), 'r1').generation).toBe(2);
    // A manifest's own generation is ignored, as an API server ignores it.
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b', '  generation: 40\n'));
    expect(meta(await p.scan(), 'r1').generation).toBe(2);
  });

  test('creationTimestamp is the first-seen time, or the manifest\'s own, and survives a restart with the generation and uid', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1') + '---\n' + route('r2', '/x', '  creationTimestamp: "2020-05-01T10:00:00Z"\n'));
    const first = await scanAndStop();
    expect(meta(first, 'r1').creationTimestamp).toBe('2026-01-01T00:00:00.000Z');
    expect(meta(first, 'r2').creationTimestamp).toBe('2020-05-01T10:00:00.000Z');
    clock = 30;
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/changed') + '---\n' + route('r2', '/x', '  creationTimestamp: "2020-05-01T10:00:00Z"\n'));
    const restarted = await scanAndStop();
    expect(meta(restarted, 'r1')).toMatchObject({ generation: 2, creationTimestamp: '2026-01-01T00:00:00.000Z', uid: meta(first, 'r1').uid });
    expect(meta(restarted, 'r2').generation).toBe(1);
  });

  test('a deleted resource is forgotten: re-creating it starts at generation 1 with a new creationTimestamp', async () => {
    const p = await open();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    await p.scan();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b'));
    expect(meta(await p.scan(), 'r1').generation).toBe(2);
    await fs.rm(path.join(manifests, 'a.yaml'));
    expect(await p.scan()).toEqual([]);
    clock = 10;
    await fs.writeFile(path.join(manifests, 'b.yaml'), route('r1', '/b'));
    expect(meta(await p.scan(), 'r1')).toMatchObject({ generation: 1, creationTimestamp: '2026-01-01T00:00:10.000Z' });
  });

  test('a broken file keeps its last good resources, logs file and line, and does not touch other files', async () => {
    const log = memoryLogger();
    const p = await open(log);
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    await fs.writeFile(path.join(manifests, 'b.yaml'), route('r2'));
    await p.scan();
    await fs.writeFile(path.join(manifests, 'a.yaml'), 'apiVersion: v1\nkind: [\n  oops: 1\n');
    await fs.writeFile(path.join(manifests, 'b.yaml'), route('r2', '/new'));
    const docs = await p.scan();
    expect(meta(docs, 'r1')).toMatchObject({ generation: 1 });
    expect(meta(docs, 'r2')).toMatchObject({ generation: 2 });
    const err = log.lines.find((l) => l.level === 'error' && /keeping its last good version/.test(l.msg));
    expect(err?.fields?.file).toBe('a.yaml');
    expect(String((err?.fields?.errors as string[])[0])).toMatch(/^a\.yaml:\d+:\d+: /);
  });

  test('a broken file seen first at start applies nothing but keeps its resources\' generation for when it is fixed', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    await scanAndStop();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b'));
    await scanAndStop(); // generation 2
    await fs.writeFile(path.join(manifests, 'a.yaml'), 'kind: [');
    const log = memoryLogger();
    const p = await open(log);
    expect(await p.scan()).toEqual([]);
    expect(log.lines.some((l) => l.level === 'error' && /no earlier good version/.test(l.msg))).toBe(true);
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b'));
    expect(meta(await p.scan(), 'r1').generation).toBe(2);
  });

  test('the same resource twice: the first file wins and the duplicate is logged', async () => {
    const log = memoryLogger();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/first'));
    await fs.writeFile(path.join(manifests, 'b.yaml'), route('r1', '/second'));
    const docs = await (await open(log)).scan();
    expect(docs).toHaveLength(1);
    expect((docs[0].doc as any).spec.rules[0].matches[0].path.value).toBe('/first');
    expect(log.lines.some((l) => l.level === 'warn' && /defined twice/.test(l.msg))).toBe(true);
  });

  test('status.yaml: one document per resource with metadata from the provider, replaced whole', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    const p = await open();
    await p.scan();
    await p.writeStatuses([
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'default', name: 'r1', generation: 1, status: { parents: [] } },
    ]);
    const text = await fs.readFile(path.join(state, 'status.yaml'), 'utf8');
    const docs = text.split(/^---\n/m).filter(Boolean).map((d) => parse(d));
    expect(docs).toEqual([
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r1', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T00:00:00.000Z' },
        status: { parents: [] },
      },
    ]);
    const reopened = new FileProvider({ manifestsDir: manifests, stateDir: state, log: memoryLogger() });
    expect((await reopened.open()).previousStatuses).toEqual([
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'default', name: 'r1', generation: 1, status: { parents: [] } },
    ]);
  });

  test('status.yaml rendered with the cache is the text rendered afresh, through equal, changed and removed statuses', () => {
    const status = (name: string, reason: string, generation = 1): StatusEntry => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      namespace: 'default',
      name,
      generation,
      status: { parents: [{ conditions: [{ type: 'Accepted', status: 'True', reason }] }] },
    });
    const lookup = () => ({ creationTimestamp: '2026-01-01T00:00:00.000Z' });
    const cache: StatusYamlCache = new Map();
    const a = status('a', 'Accepted');
    const rounds: StatusEntry[][] = [
      [a, status('b', 'Accepted')],
      [a, status('b', 'Accepted')], // equal content, new objects
      [a, status('b', 'Pending')], // changed
      [status('a', 'Accepted', 2)], // changed generation, b removed
      [status('a', 'Accepted', 2), status('b', 'Accepted')], // b again
    ];
    for (const entries of rounds) expect(renderStatusYaml(entries, lookup, cache)).toBe(renderStatusYaml(entries, lookup));
    expect([...cache.keys()]).toEqual(['HTTPRoute/default/a', 'HTTPRoute/default/b']);
  });

  test('resources.json made of kept record texts is the JSON of the records afresh, keys sorted, through added, replaced and removed records', () => {
    const record = (generation: number, source = 'a.yaml'): ResourceRecord => ({ uid: `u-${generation}`, generation, creationTimestamp: '2026-01-01T00:00:00.000Z', specHash: 'h"\\x', source });
    const afresh = (records: Map<string, ResourceRecord>) =>
      JSON.stringify({ version: 1, resources: Object.fromEntries([...records].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }, null, 2) + '\n';
    const records = new Map<string, ResourceRecord>();
    expect(stateFileText(records)).toBe(afresh(records));
    records.set('gateway.networking.k8s.io/HTTPRoute/default/b', record(1));
    records.set('gateway.networking.k8s.io/HTTPRoute/default/a', record(1));
    records.set('/Secret/default/Z', record(3, 'dir/s.yaml'));
    expect(stateFileText(records)).toBe(afresh(records));
    records.set('gateway.networking.k8s.io/HTTPRoute/default/a', record(2));
    records.delete('/Secret/default/Z');
    expect(stateFileText(records)).toBe(afresh(records));
    expect(JSON.parse(stateFileText(records)).resources['gateway.networking.k8s.io/HTTPRoute/default/a'].generation).toBe(2);
  });

  test('watch() reports a change after a short quiet time', async () => {
    const p = await open();
    let calls = 0;
    const changed = new Promise<void>((resolve) => p.watch(() => (++calls, resolve())));
    try {
      await fs.writeFile(path.join(manifests, 'c.yaml'), route('r9'));
      await changed;
      expect(calls).toBeGreaterThanOrEqual(1);
    } finally {
      p.close();
    }
  });

  test('after an edit, documents keep their own position and metadata; only the edited one changes', async () => {
    const p = await open();
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1') + '---\n' + route('r2') + '---\n' + route('r3'));
    const first = await p.scan();
    const line = (docs: { source: string; doc: unknown }[], name: string) => docs.find((d) => (d.doc as any).metadata.name === name)!.source;
    expect([line(first, 'r1'), line(first, 'r2'), line(first, 'r3')]).toEqual(['a.yaml:1', 'a.yaml:10', 'a.yaml:19']);
    // r1 grows by one line and changes its path: r2 and r3 move down, with the same generation.
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1', '/b', '  labels: { team: x }\n') + '---\n' + route('r2') + '---\n' + route('r3'));
    const second = await p.scan();
    expect([line(second, 'r1'), line(second, 'r2'), line(second, 'r3')]).toEqual(['a.yaml:1', 'a.yaml:11', 'a.yaml:20']);
    expect([meta(second, 'r1').generation, meta(second, 'r2').generation, meta(second, 'r3').generation]).toEqual([2, 1, 1]);
    expect((second.find((d) => (d.doc as any).metadata.name === 'r1')!.doc as any).spec.rules[0].matches[0].path.value).toBe('/b');
    // The same document twice in a file: the first one wins, as before the edit.
    const log = memoryLogger();
    const q = await open(log);
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1') + '---\n' + route('r1'));
    expect((await q.scan()).filter((d) => (d.doc as any).metadata.name === 'r1').map((d) => d.source)).toEqual(['a.yaml:1']);
    expect(log.lines.some((l) => l.msg === 'the same resource is defined twice; the first definition wins')).toBe(true);
  });

  test('documents handed out are read-only', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), route('r1'));
    const [doc] = await (await open()).scan();
    expect(() => {
      (doc.doc as any).spec.rules[0].matches[0].path.value = '/other';
    }).toThrow(TypeError);
  });

  test('a document that contains itself (a YAML alias) is handed on for the parser to reject; the others are read', async () => {
    await fs.writeFile(path.join(manifests, 'a.yaml'), 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: loop }\nspec: &s\n  self: *s\n---\n' + route('r1'));
    const docs = await (await open()).scan();
    expect(docs.map((d) => d.source)).toEqual(['a.yaml:1', 'a.yaml:7']);
    const parsed = parseManifests(docs);
    expect(parsed.invalid.map((r) => [r.name, r.source, r.message])).toEqual([['loop', 'a.yaml:1', expect.stringMatching(/cannot be read as JSON/)]]);
    expect(parsed.set.httpRoutes.map((r) => r.metadata.name)).toEqual(['r1']);
  });

  test('a YAML alias used twice in a document (no cycle) is read as two equal values', async () => {
    const text = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: twice }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /a } }]
      backendRefs: &b [{ name: svc, port: 80 }]
    - matches: [{ path: { type: PathPrefix, value: /b } }]
      backendRefs: *b
`;
    await fs.writeFile(path.join(manifests, 'a.yaml'), text);
    const p = await open();
    for (let run = 0; run < 2; run++) {
      const parsed = parseManifests(await p.scan());
      expect(parsed.invalid).toEqual([]);
      expect(parsed.set.httpRoutes[0].spec.rules.map((r) => r.backendRefs.map((b) => `${b.name}:${b.port}`))).toEqual([['svc:80'], ['svc:80']]);
    }
  });

  test('writeFileAtomic creates a missing folder, replaces the file whole and leaves no temp file', async () => {
    const file = path.join(dir, 'new', 'deeper', 'x.yaml');
    await writeFileAtomic(file, 'one\n');
    await writeFileAtomic(file, 'two\n', { fsync: false });
    expect(await fs.readFile(file, 'utf8')).toBe('two\n');
    expect(await fs.readdir(path.dirname(file))).toEqual(['x.yaml']);
  });

  test('YAML syntax errors name the line', () => {
    const r = parseManifestText('x.yaml', 'a: 1\n---\nb: [\n c: d\n');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0].line).toBeGreaterThanOrEqual(3);
  });
});
