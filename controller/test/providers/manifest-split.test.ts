/**
 * A manifest file's documents are found by searching for document markers (`---` at the start
 * of a line, then whitespace or the end): the same chunks, with the same start lines, as
 * splitting the text into lines and testing each one, on random texts full of near-markers.
 */
import { parseManifestText, splitDocuments } from '../../src/providers/file/manifests';
import { rng } from '../random-routes';

/** The plain way: every line tested. */
function byLines(text: string): { line: number; text: string }[] {
  const chunks: { line: number; text: string }[] = [];
  const lines = text.split('\n');
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    if (i > start && /^---(\s|$)/.test(lines[i])) {
      chunks.push({ line: start + 1, text: lines.slice(start, i).join('\n') });
      start = i;
    }
  }
  chunks.push({ line: start + 1, text: lines.slice(start).join('\n') });
  return chunks;
}

test('documents are split where a line starts with a document marker, as a line-by-line split does', () => {
  const r = rng(29);
  const pieces = ['---', '--- ', '---\t# c', '---\r', '----', '---x', ' ---', 'a: ---', 'kind: HTTPRoute', '', '  - x', '# ---', '...'];
  for (let n = 0; n < 2000; n++) {
    const lines = Array.from({ length: Math.floor(r() * 12) }, () => pieces[Math.floor(r() * pieces.length)]);
    const text = lines.join('\n') + (r() < 0.3 ? '\n' : '');
    expect(splitDocuments(text)).toEqual(byLines(text));
  }
});

test('a file parsed with the last parse of it kept gives what a fresh parse gives, and unchanged documents are the same objects', () => {
  const r = rng(31);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  // Documents as texts: routes, duplicates, comments and blanks before the content, empty
  // documents, and now and then one that does not parse.
  const doc = () => {
    const kind = r();
    if (kind < 0.05) return '---\nkind: [unclosed';
    if (kind < 0.1) return '---';
    return `---\n${r() < 0.2 ? '# note\n\n' : ''}kind: HTTPRoute\nmetadata:\n  name: r${Math.floor(r() * 30)}\nspec:\n  path: /p${Math.floor(r() * 5)}`;
  };
  for (let run = 0; run < 200; run++) {
    let docs = Array.from({ length: Math.floor(r() * 12) }, doc);
    let memo: ReturnType<typeof parseManifestText>['memo'] | undefined;
    for (let step = 0; step < 15; step++) {
      const edit = r();
      if (edit < 0.3 && docs.length) docs[Math.floor(r() * docs.length)] = doc();
      else if (edit < 0.5) docs.splice(Math.floor(r() * (docs.length + 1)), 0, doc());
      else if (edit < 0.7 && docs.length) docs.splice(Math.floor(r() * docs.length), 1);
      else if (edit < 0.8 && docs.length) docs.splice(Math.floor(r() * (docs.length + 1)), 0, pick(docs));
      else if (edit < 0.85) docs = [...docs].reverse();
      const text = docs.join('\n') + (r() < 0.5 ? '\n' : '');
      const kept = parseManifestText('f.yaml', text, memo);
      const { memo: _fresh, ...fresh } = parseManifestText('f.yaml', text);
      const { memo: next, ...result } = kept;
      expect(result).toEqual(fresh);
      // A document whose text was in the last version (once, and once now) is that same object.
      if (memo && result.ok) {
        const chunks = splitDocuments(text);
        const count = (xs: { text: string }[], t: string) => xs.filter((x) => x.text === t).length;
        chunks.forEach((c, i) => {
          const then = memo!.find((x) => x.text === c.text)?.known?.value;
          if (then === undefined || then === null || count(memo!, c.text) !== 1 || count(chunks, c.text) !== 1) return;
          const end = i + 1 < chunks.length ? chunks[i + 1].line : Infinity;
          const now = result.docs.find((d) => d.line >= c.line && d.line < end);
          expect(now?.doc).toBe(then);
        });
      }
      memo = next;
    }
  }
});

test('documents hold what YAML says: non-finite numbers stay numbers, an alias cycle stays a cycle', () => {
  // Documents are rebuilt through JSON when JSON writes them unchanged (a smaller heap); the
  // values JSON cannot write keep js-yaml's own objects.
  const parse = parseManifestText('a.yaml', 'kind: A\nspec: {weight: .inf, ratio: .nan, port: 80, name: "x"}\n---\nkind: B\nself: &s {inner: *s}\n---\nkind: C\nlist: [1, "two", null, true, {a: [3]}]\n');
  if (!parse.ok) throw new Error(JSON.stringify(parse.errors));
  const [a, b, c] = parse.docs.map((d) => d.doc as Record<string, any>);
  expect(a.spec.weight).toBe(Infinity);
  expect(Number.isNaN(a.spec.ratio)).toBe(true);
  expect(a.spec.port).toBe(80);
  expect(b.self.inner).toBe(b.self);
  expect(c).toEqual({ kind: 'C', list: [1, 'two', null, true, { a: [3] }] });
  expect(Object.isFrozen(c.list[4].a)).toBe(true);
});
