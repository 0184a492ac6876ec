/**
 * npx tsx scripts/heap-top.ts FILE.heapsnapshot [--top=60 --min-mb=1] — the largest retainers of
 * a V8 heap snapshot without a browser: self size per constructor, and the objects that retain
 * the most (dominator tree, as DevTools' "retained size") with the path that holds each one
 * from the roots. Needs a heap of about the snapshot file's size (node --max-old-space-size).
 */
import * as fs from 'fs';

const file = process.argv[2];
const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const TOP = Number(arg('top', '60'));
const MIN = Number(arg('min-mb', '1')) * 1048576;

/**
 * The snapshot's parts read from its bytes: a snapshot of a large heap is longer than the
 * longest string V8 makes (512 MB), so it cannot be read as one text.
 */
function readSnapshot(path: string) {
  const buf = fs.readFileSync(path);
  const at = (key: string, from = 0) => {
    const i = buf.indexOf(`"${key}":`, from);
    if (i < 0) throw new Error(`${path}: no ${key}`);
    return i + key.length + 3;
  };
  const numbers = (key: string): Int32Array => {
    let i = buf.indexOf(0x5b, at(key)) + 1; // '['
    let out = new Int32Array(1 << 20);
    let n = 0;
    let v = 0;
    let digits = false;
    for (; ; i++) {
      const c = buf[i];
      if (c >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        digits = true;
      } else {
        if (digits) {
          if (n === out.length) {
            const grown = new Int32Array(out.length * 2);
            grown.set(out);
            out = grown;
          }
          out[n++] = v;
        }
        v = 0;
        digits = false;
        if (c === 0x5d) break; // ']'
      }
    }
    return out.subarray(0, n);
  };
  const metaStart = at('snapshot');
  const nodesKey = buf.indexOf('"nodes":', metaStart);
  const snapshot = JSON.parse(buf.subarray(metaStart, buf.lastIndexOf(0x7d, nodesKey) + 1).toString('utf8'));
  const stringsStart = at('strings');
  const strings = JSON.parse(buf.subarray(stringsStart, buf.lastIndexOf(0x5d) + 1).toString('utf8')) as string[];
  return { snapshot, nodes: numbers('nodes'), edges: numbers('edges'), strings };
}
const snap = readSnapshot(file) as {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: Int32Array;
  edges: Int32Array;
  strings: string[];
};
const { meta } = snap.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nType = meta.node_fields.indexOf('type');
const nName = meta.node_fields.indexOf('name');
const nSize = meta.node_fields.indexOf('self_size');
const nEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const WEAK = edgeTypes.indexOf('weak');
const SHORTCUT = edgeTypes.indexOf('shortcut');
const N = snap.nodes.length / NF;
const nodes = snap.nodes;
const edges = snap.edges;
const strings = snap.strings;
(snap as { nodes?: unknown }).nodes = undefined;
(snap as { edges?: unknown }).edges = undefined;

const firstEdge = new Int32Array(N + 1);
for (let i = 0, e = 0; i < N; i++) {
  firstEdge[i] = e;
  e += nodes[i * NF + nEdges] * EF;
  firstEdge[i + 1] = e;
}
const typeOf = (i: number) => nodeTypes[nodes[i * NF + nType]];
const nameOf = (i: number) => strings[nodes[i * NF + nName]];
const sizeOf = (i: number) => nodes[i * NF + nSize];
const label = (i: number) => {
  const t = typeOf(i);
  const n = nameOf(i);
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return `"${n.slice(0, 40).replace(/\n/g, '\\n')}"(${t})`;
  return t === 'object' || t === 'closure' ? n : `(${t}) ${n.slice(0, 40)}`;
};
const edgeName = (e: number) => {
  const t = edgeTypes[edges[e + eType]];
  const v = edges[e + eName];
  return t === 'element' || t === 'hidden' ? `[${v}]` : strings[v];
};
const counted = (e: number) => edges[e + eType] !== WEAK && edges[e + eType] !== SHORTCUT;

// Depth-first postorder from the root over strong edges.
const post = new Int32Array(N);
const postIndex = new Int32Array(N).fill(-1);
let postCount = 0;
{
  const stack = new Int32Array(N);
  const cursor = new Int32Array(N);
  const seen = new Uint8Array(N);
  let sp = 0;
  stack[sp++] = 0;
  seen[0] = 1;
  cursor[0] = firstEdge[0];
  while (sp) {
    const v = stack[sp - 1];
    let pushed = false;
    while (cursor[v] < firstEdge[v + 1]) {
      const e = cursor[v];
      cursor[v] += EF;
      if (!counted(e)) continue;
      const w = edges[e + eTo] / NF;
      if (seen[w]) continue;
      seen[w] = 1;
      cursor[w] = firstEdge[w];
      stack[sp++] = w;
      pushed = true;
      break;
    }
    if (!pushed) {
      sp--;
      postIndex[v] = postCount;
      post[postCount++] = v;
    }
  }
}
// Predecessors (CSR) among reachable nodes.
const predCount = new Int32Array(N + 1);
for (let v = 0; v < N; v++) {
  if (postIndex[v] < 0) continue;
  for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (counted(e)) predCount[edges[e + eTo] / NF + 1]++;
}
for (let i = 0; i < N; i++) predCount[i + 1] += predCount[i];
const preds = new Int32Array(predCount[N]);
{
  const fill = predCount.slice(0, N);
  for (let v = 0; v < N; v++) {
    if (postIndex[v] < 0) continue;
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (counted(e)) preds[fill[edges[e + eTo] / NF]++] = v;
  }
}
// Cooper-Harvey-Kennedy iterative dominators, in postorder numbers.
const idom = new Int32Array(postCount).fill(-1);
const root = postCount - 1;
idom[root] = root;
for (let changed = true; changed; ) {
  changed = false;
  for (let p = root - 1; p >= 0; p--) {
    const v = post[p];
    let d = -1;
    for (let k = predCount[v]; k < predCount[v + 1]; k++) {
      let q = postIndex[preds[k]];
      if (q < 0 || idom[q] < 0) continue;
      if (d < 0) d = q;
      else {
        let a = d;
        while (a !== q) {
          while (a < q) a = idom[a];
          while (q < a) q = idom[q];
        }
        d = a;
      }
    }
    if (d >= 0 && idom[p] !== d) {
      idom[p] = d;
      changed = true;
    }
  }
}
const retained = new Float64Array(postCount);
for (let p = 0; p < postCount; p++) retained[p] += sizeOf(post[p]);
for (let p = 0; p < root; p++) retained[idom[p]] += retained[p];

let total = 0;
for (let p = 0; p < postCount; p++) total += sizeOf(post[p]);
const mb = (b: number) => (b / 1048576).toFixed(1);
console.log(`${file}: ${N} nodes, ${postCount} reachable, ${mb(total)} MB reachable self size`);

const byCtor = new Map<string, { count: number; size: number }>();
for (let p = 0; p < postCount; p++) {
  const v = post[p];
  const t = typeOf(v);
  const k = t === 'object' || t === 'closure' ? `${nameOf(v)}` : `(${t})`;
  const c = byCtor.get(k) ?? { count: 0, size: 0 };
  c.count++;
  c.size += sizeOf(v);
  byCtor.set(k, c);
}
console.log('\nself size by constructor:');
for (const [k, c] of [...byCtor].sort((a, b) => b[1].size - a[1].size).slice(0, 30)) console.log(`${mb(c.size).padStart(8)} MB ${String(c.count).padStart(9)}  ${k.slice(0, 80)}`);

// The path from the root: dominator chain, each step named by an edge from its dominator.
const pathOf = (p: number) => {
  const steps: string[] = [];
  for (let q = p; q !== root && steps.length < 14; q = idom[q]) {
    const v = post[q];
    const d = post[idom[q]];
    let name = '?';
    for (let e = firstEdge[d]; e < firstEdge[d + 1]; e += EF) if (edges[e + eTo] / NF === v) { name = edgeName(e); break; }
    steps.push(`${String(name).slice(0, 30)}:${label(v).slice(0, 50)}`);
  }
  return steps.reverse().join(' > ');
};
// Objects retaining the most, skipping one whose dominator retains almost the same (one chain).
console.log(`\nlargest retainers (retained MB, self KB):`);
const order = Array.from({ length: postCount }, (_, p) => p).filter((p) => retained[p] >= MIN && p !== root).sort((a, b) => retained[b] - retained[a]);
let shown = 0;
for (const p of order) {
  const d = idom[p];
  if (d !== root && retained[d] - retained[p] < retained[p] * 0.05 && retained[d] >= MIN) continue;
  console.log(`${mb(retained[p]).padStart(8)} ${String(Math.round(sizeOf(post[p]) / 1024)).padStart(7)}  ${pathOf(p)}`);
  if (++shown >= TOP) break;
}

// The dominator tree from the root, to --depth levels, children over --min-mb.
const DEPTH = Number(arg('depth', '0'));
if (DEPTH > 0) {
  const kids = new Map<number, number[]>();
  for (let p = 0; p < root; p++) if (retained[p] >= MIN) (kids.get(idom[p]) ?? kids.set(idom[p], []).get(idom[p])!).push(p);
  const edgeTo = (d: number, v: number) => {
    for (let e = firstEdge[d]; e < firstEdge[d + 1]; e += EF) if (edges[e + eTo] / NF === v) return edgeName(e);
    return '?';
  };
  console.log('\ndominator tree:');
  const walk = (p: number, depth: number) => {
    const list = (kids.get(p) ?? []).sort((a, b) => retained[b] - retained[a]);
    for (const c of list.slice(0, 25)) {
      console.log(`${'  '.repeat(depth)}${mb(retained[c])} MB ${String(edgeTo(post[p], post[c])).slice(0, 30)}: ${label(post[c]).slice(0, 60)}`);
      if (depth + 1 < DEPTH) walk(c, depth + 1);
    }
  };
  walk(root, 0);
}

// --holders=A,B: for each object of those constructors, each property's reachable size (data it
// can reach, shared or not; functions, code and contexts not followed), and what that property
// alone retains.
const HOLDERS = arg('holders', '').split(',').filter(Boolean);
if (HOLDERS.length) {
  const mark = new Int32Array(N);
  let stamp = 0;
  const skip = new Set(['closure', 'code', 'object shape', 'hidden', 'native', 'synthetic']);
  const reach = (start: number) => {
    stamp++;
    let size = 0;
    const stack = [start];
    mark[start] = stamp;
    while (stack.length) {
      const v = stack.pop()!;
      size += sizeOf(v);
      for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) {
        if (!counted(e)) continue;
        const w = edges[e + eTo] / NF;
        if (mark[w] === stamp || skip.has(typeOf(w)) || nameOf(w) === 'system / Context') continue;
        mark[w] = stamp;
        stack.push(w);
      }
    }
    return size;
  };
  for (let v = 0; v < N; v++) {
    if (typeOf(v) !== 'object' || !HOLDERS.includes(nameOf(v))) continue;
    console.log(`\n${nameOf(v)} @${v}: reachable ${mb(reach(v))} MB`);
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) {
      if (!counted(e) || edgeTypes[edges[e + eType]] !== 'property') continue;
      const w = edges[e + eTo] / NF;
      const r = reach(w);
      const p = postIndex[w];
      if (r >= MIN) console.log(`  ${mb(r).padStart(7)} MB reachable, ${mb(p >= 0 ? retained[p] : 0).padStart(6)} retained  .${edgeName(e)}: ${label(w).slice(0, 50)}`);
    }
  }
}

// --claims=Ctor.prop.prop,...: each object goes to the first of these (in order) that reaches
// it (functions, code and contexts not followed): a partition of what they hold between them.
const CLAIMS = arg('claims', '').split(',').filter(Boolean);
if (CLAIMS.length) {
  const owner = new Int32Array(N).fill(-1);
  const skip = new Set(['closure', 'code', 'object shape', 'hidden', 'native', 'synthetic']);
  const follow = (v: number, prop: string) => {
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (counted(e) && String(edgeName(e)) === prop) return edges[e + eTo] / NF;
    return -1;
  };
  // V8 adds an edge from a WeakMap key to its value: the value is held by the map, not the key.
  const isEphemeron = (e: number) => edgeTypes[edges[e + eType]] === 'internal' && String(edgeName(e)).includes('part of key');
  console.log('\nclaims (first holder in the list that reaches an object owns it):');
  // --shapes: the objects' sizes by constructor and property names (what kind of object).
  const SHAPES = process.argv.includes('--shapes');
  const via = new Map<number, string>();
  const propsOf = (x: number) => {
    const names: string[] = [];
    for (let e = firstEdge[x]; e < firstEdge[x + 1] && names.length < 6; e += EF) if (edgeTypes[edges[e + eType]] === 'property') names.push(String(edgeName(e)));
    return names.join(',');
  };
  CLAIMS.forEach((claim, ci) => {
    const [ctor, ...props] = claim.split('.');
    let size = 0;
    let count = 0;
    const byType = new Map<string, number>();
    for (let v = 0; v < N; v++) {
      if (nameOf(v) !== ctor) continue;
      let w = v;
      for (const p of props) if (w >= 0) w = follow(w, p);
      if (w < 0 || owner[w] >= 0) continue;
      const stack = [w];
      owner[w] = ci;
      while (stack.length) {
        const x = stack.pop()!;
        size += sizeOf(x);
        count++;
        const t = typeOf(x) === 'object' ? `${nameOf(x)}${SHAPES ? `{${propsOf(x)}}` : ''}` : SHAPES && typeOf(x) === 'array' ? `(array) ${via.get(x) ?? ''}` : `(${typeOf(x)})`;
        byType.set(t, (byType.get(t) ?? 0) + sizeOf(x));
        for (let e = firstEdge[x]; e < firstEdge[x + 1]; e += EF) {
          if (!counted(e) || isEphemeron(e)) continue;
          const y = edges[e + eTo] / NF;
          if (owner[y] >= 0 || skip.has(typeOf(y)) || nameOf(y) === 'system / Context') continue;
          owner[y] = ci;
          if (SHAPES) via.set(y, `${String(edgeName(e))} of ${typeOf(x) === 'object' ? (nameOf(x) === 'Array' ? `Array ${via.get(x) ?? ''}` : `${nameOf(x)}{${propsOf(x)}}`) : typeOf(x)}`);
          stack.push(y);
        }
      }
    }
    const top = [...byType].sort((a, b) => b[1] - a[1]).slice(0, SHAPES ? 25 : 5).map(([t, s]) => (SHAPES ? `${mb(s).padStart(7)} ${t.slice(0, 110)}` : `${t.slice(0, 20)} ${mb(s)}`));
    console.log(`${mb(size).padStart(8)} MB ${String(count).padStart(8)} objects  ${claim}   ${SHAPES ? '\n  ' + top.join('\n  ') : `(${top.join(', ')})`}`);
  });
}
