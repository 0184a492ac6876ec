/**
 * The pipeline's folders depend one way: a folder that imports another is never imported by it
 * (conditions/ exists so that graph/ and status/ need not import each other). A two-way
 * dependency makes the data flow invisible in the tree and invites load-order cycles; this
 * suite names the files on both sides when one comes back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const SRC = resolve(__dirname, '../src');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Top-level folder (or file) of src/ a path belongs to. */
const topOf = (path: string) => relative(SRC, path).split(sep)[0];

/** "from -> to" for every import that crosses a top-level folder, with the importing files. */
export function folderEdges(files: { path: string; text: string }[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const { path, text } of files) {
    const from = topOf(path);
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(path), m[1]);
      if (!target.startsWith(SRC + sep)) continue;
      const to = topOf(target);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), relative(SRC, path)]);
    }
  }
  return edges;
}

export function twoWay(edges: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [key, files] of edges) {
    const [from, to] = key.split(' -> ');
    const back = edges.get(`${to} -> ${from}`);
    if (back && from < to) out.push(`${key} (${[...new Set(files)].join(', ')}) and ${to} -> ${from} (${[...new Set(back)].join(', ')})`);
  }
  return out;
}

describe('folders of controller/src import each other one way only', () => {
  it('finds a two-way import when there is one', () => {
    const edges = folderEdges([
      { path: join(SRC, 'graph/a.ts'), text: "import { x } from '../status/b';" },
      { path: join(SRC, 'status/b.ts'), text: "import type { Y } from '../graph/types';" },
      { path: join(SRC, 'model/c.ts'), text: "export { z } from '../graph/a';\nconst w = import('./d');" },
    ]);
    expect(twoWay(edges)).toEqual(['graph -> status (graph/a.ts) and status -> graph (status/b.ts)']);
  });

  it('no folder of controller/src imports a folder that imports it', () => {
    const files = sourceFiles(SRC).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
    expect(files.length).toBeGreaterThan(50);
    expect(twoWay(folderEdges(files))).toEqual([]);
  });
});
