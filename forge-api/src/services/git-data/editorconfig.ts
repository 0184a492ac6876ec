/**
 * The EditorConfig definition of a file name, from the `.editorconfig` at the root of a commit
 * (what Gitea answers: the known properties that apply, later sections winning; unset ones
 * left out). Section names are EditorConfig globs: `*`, `**`, `?`, `[...]`, `[!...]`,
 * `{a,b}`, `{1..3}`; a glob without `/` matches the name in any folder.
 */

export interface EditorconfigDefinition {
  charset?: string;
  indent_style?: string;
  indent_size?: string;
  tab_width?: number;
  end_of_line?: string;
  trim_trailing_whitespace?: boolean;
  insert_final_newline?: boolean;
}

interface Section {
  glob: string;
  props: Map<string, string>;
}

export function parseEditorconfig(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.*)\]$/.exec(line);
    if (head) {
      current = { glob: head[1], props: new Map() };
      sections.push(current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || !current) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).replace(/\s[#;].*$/, '').trim();
    current.props.set(key, value);
  }
  return sections;
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** An EditorConfig glob as a regular expression over a path relative to the file's folder. */
export function globToRegExp(glob: string): RegExp {
  let g = glob;
  if (!g.includes('/')) g = `**/${g}`;
  else if (g.startsWith('/')) g = g.slice(1);
  let re = '';
  let i = 0;
  let braces = 0;
  while (i < g.length) {
    const c = g[i];
    if (c === '\\' && i + 1 < g.length) {
      re += escapeRe(g[i + 1]);
      i += 2;
      continue;
    }
    if (c === '*') {
      if (g[i + 1] === '*') {
        // "**/" also matches no folder at all.
        if (g[i + 2] === '/') {
          re += '(?:.*/)?';
          i += 3;
        } else {
          re += '.*';
          i += 2;
        }
      } else {
        re += '[^/]*';
        i += 1;
      }
      continue;
    }
    if (c === '?') {
      re += '[^/]';
      i += 1;
      continue;
    }
    if (c === '[') {
      const end = g.indexOf(']', i + 1);
      if (end < 0) {
        re += '\\[';
        i += 1;
        continue;
      }
      let body = g.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = end + 1;
      continue;
    }
    if (c === '{') {
      const end = g.indexOf('}', i + 1);
      const body = end < 0 ? '' : g.slice(i + 1, end);
      const range = /^(-?\d+)\.\.(-?\d+)$/.exec(body);
      if (range) {
        const [lo, hi] = [Number(range[1]), Number(range[2])].sort((a, b) => a - b);
        const nums: string[] = [];
        for (let n = lo; n <= hi && nums.length < 10_000; n++) nums.push(String(n));
        re += `(?:${nums.join('|')})`;
        i = end + 1;
        continue;
      }
      if (end < 0 || !body.includes(',')) {
        re += '\\{';
        i += 1;
        continue;
      }
      re += '(?:';
      braces++;
      i += 1;
      continue;
    }
    if (c === ',' && braces > 0) {
      re += '|';
      i += 1;
      continue;
    }
    if (c === '}' && braces > 0) {
      re += ')';
      braces--;
      i += 1;
      continue;
    }
    re += escapeRe(c);
    i += 1;
  }
  while (braces-- > 0) re += ')';
  return new RegExp(`^${re}$`);
}

/** The definition for one file name (empty when no section applies). */
export function definitionFor(text: string, file: string): EditorconfigDefinition {
  const props = new Map<string, string>();
  for (const s of parseEditorconfig(text)) {
    let re: RegExp;
    try {
      re = globToRegExp(s.glob);
    } catch {
      continue;
    }
    if (!re.test(file)) continue;
    for (const [k, v] of s.props) props.set(k, v);
  }
  const def: EditorconfigDefinition = {};
  const lower = (k: string) => props.get(k)?.toLowerCase();
  if (props.has('charset')) def.charset = lower('charset');
  if (props.has('indent_style')) def.indent_style = lower('indent_style');
  if (props.has('indent_size')) def.indent_size = lower('indent_size');
  const tab = Number(props.get('tab_width'));
  if (Number.isInteger(tab) && tab > 0) def.tab_width = tab;
  if (props.has('end_of_line')) def.end_of_line = lower('end_of_line');
  const bool = (k: string) => (lower(k) === 'true' ? true : lower(k) === 'false' ? false : undefined);
  const trim = bool('trim_trailing_whitespace');
  if (trim !== undefined) def.trim_trailing_whitespace = trim;
  const final = bool('insert_final_newline');
  if (final !== undefined) def.insert_final_newline = final;
  for (const k of Object.keys(def) as (keyof EditorconfigDefinition)[]) if (def[k] === '' || def[k] === undefined) delete def[k];
  return def;
}
