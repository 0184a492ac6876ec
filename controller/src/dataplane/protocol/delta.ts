/**
 * Config deltas: a new config as line edits against one the agent already holds.
 *
 * A change of one route rewrites a few lines of a config that is megabytes at a thousand
 * routes. Sending it whole cost a JSON encoding, a TLS stream the controller's event loop must
 * keep feeding between reconcile stages, and a parse on the agent: ~0.5 s on a loaded machine,
 * for ~10 changed lines. A delta carries only the changed lines; the agent rebuilds the files and
 * checks them against the version (a hash of the whole config), so a wrong base can never be
 * applied: it reconnects and gets the full config instead.
 *
 * Per file: absent = unchanged, null = removed, a string = the whole new text, or hunks
 * [baseLine, deletedLines, insertedLines] (ascending, on the base's lines split at '\n').
 */

export type Hunk = [start: number, deleted: number, inserted: string[]];
export type FileDelta = null | string | { hunks: Hunk[] };
export type FilesDelta = Record<string, FileDelta>;

/** Above this many edited lines in one file, the file is sent whole (the diff costs more). */
const MAX_EDITS = 1000;

export function makeDelta(base: Record<string, string>, next: Record<string, string>): FilesDelta {
  const out: FilesDelta = {};
  for (const name of Object.keys(base)) if (!(name in next)) out[name] = null;
  for (const [name, text] of Object.entries(next)) {
    const old = base[name];
    if (old === text) continue;
    if (old === undefined) {
      out[name] = text;
      continue;
    }
    const hunks = diffLines(old.split('\n'), text.split('\n'), MAX_EDITS);
    out[name] = hunks && deltaSize(hunks) < text.length ? { hunks } : text;
  }
  return out;
}

/** The files `delta` makes of `base`. */
export function applyDelta(base: Record<string, string>, delta: FilesDelta): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(base)) if (!(name in delta)) out[name] = text;
  for (const [name, d] of Object.entries(delta)) {
    if (d === null) continue;
    if (typeof d === 'string') {
      out[name] = d;
      continue;
    }
    const old = base[name];
    if (old === undefined) throw new Error(`delta edits ${name}, which the base does not have`);
    out[name] = patchText(old, d.hunks);
  }
  return out;
}

/**
 * The hunks applied to `text` (lines = text.split('\\n')), cutting it at line starts found as
 * they are needed instead of splitting and joining megabytes of lines.
 */
function patchText(text: string, hunks: Hunk[]): string {
  let line = 0;
  let offset = 0;
  /** Offset where line i starts; -1 past the last line. Calls come in ascending order. */
  const lineStart = (i: number): number => {
    while (line < i) {
      const nl = text.indexOf('\n', offset);
      if (nl < 0) return -1;
      offset = nl + 1;
      line++;
    }
    return offset;
  };
  const segments: string[] = [];
  const keep = (from: number, to: number) => {
    const start = lineStart(from);
    if (start < 0 || lineStart(to - 1) < 0) throw new Error('delta hunks do not fit the base');
    const end = lineStart(to);
    segments.push(text.slice(start, end < 0 ? text.length : end - 1));
  };
  let at = 0;
  for (const [start, deleted, inserted] of hunks) {
    if (start < at) throw new Error('delta hunks overlap');
    if (start > at) keep(at, start);
    else if (lineStart(start + deleted - 1) < 0 && deleted > 0) throw new Error('delta hunks do not fit the base');
    for (const l of inserted) segments.push(l);
    at = start + deleted;
  }
  const rest = lineStart(at);
  if (rest >= 0) segments.push(text.slice(rest));
  return segments.join('\n');
}

function deltaSize(hunks: Hunk[]): number {
  let n = 0;
  for (const [, , inserted] of hunks) {
    n += 16;
    for (const l of inserted) n += l.length + 1;
  }
  return n;
}

/**
 * Myers' O(ND) shortest edit script between two line arrays, after trimming the common head and
 * tail (where a route change leaves nearly all of a config). undefined when more than
 * `maxEdits` lines differ.
 */
export function diffLines(a: string[], b: string[], maxEdits: number): Hunk[] | undefined {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n === 0 && m === 0) return [];
  if (n === 0 || m === 0) return [[head, n, b.slice(head, head + m)]];
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  // v[k] = furthest x on diagonal k; before each step d, a copy of v[-d-1..d+1] to walk back.
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[head + x] === b[head + y]) x++, y++;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return undefined;
  // Walk back: each step d is one deleted (x-1) or inserted (y-1) line, then a diagonal run.
  const ops: ('d' | 'i' | '=')[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const pv = trace[d];
    const at = (k: number) => pv[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk);
    const py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) ops.push('='), x--, y--;
    if (down) ops.push('i'), y--;
    else ops.push('d'), x--;
  }
  while (x > 0 && y > 0) ops.push('='), x--, y--;
  ops.reverse();
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  let cur: Hunk | undefined;
  for (const op of ops) {
    if (op === '=') {
      if (cur) hunks.push(cur), (cur = undefined);
      i++, j++;
      continue;
    }
    cur ??= [head + i, 0, []];
    if (op === 'd') cur[1]++, i++;
    else cur[2].push(b[head + j]), j++;
  }
  if (cur) hunks.push(cur);
  return hunks;
}
