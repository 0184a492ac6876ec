/**
 * Differential check of our RE2 parser against the real RE2 (Google's C++ library compiled to
 * WASM, package re2-wasm): we must never accept what RE2 refuses, and never blame RE2 syntax
 * for what RE2 accepts (a refusal of an RE2-valid pattern must be a PCRE reason).
 */
import { WrappedRE2 } from 're2-wasm/build/wasm/re2';
import { regexVerdict } from '../src/graph/regex';

function re2Accepts(pattern: string): boolean {
  // The packaged RE2 predates the `(?<name>` spelling that current RE2 accepts.
  const re = new WrappedRE2(pattern.replace(/\(\?<(?![=!])/g, '(?P<'), false, false, false);
  try {
    return re.ok();
  } finally {
    (re as unknown as { delete(): void }).delete();
  }
}

const corpus = [
  '', 'a', '/api/v1', '^/a(b|c)*$', '[a-z]+', '[^a-z]', '[]a]', '[^]a]', '[a-]', '[-a]', '[a\\-z]', '[\\d-]', '[--a]', '[z-a]',
  '[[:alpha:]]', '[[:^alpha:]]', '[[:foo:]]', '[[:alpha:]', '[:alpha:]', '[a[:digit:]b]', '[[.a.]]', '[[=a=]]', '[a[b]', '[\\]]', '[\\[]',
  '[', ']', '}', '{', 'a{', 'a{1', 'a{1,', 'a{,2}', 'a{2}', 'a{2,}', 'a{2,3}', 'a{3,2}', 'a{1000}', 'a{1001}', 'a{01}', '{2}', 'a{2}{3}',
  '(a{100}){10}', '(a{100}){11}', '((a{10}){10}){10}', '((a{10}){10}){11}', 'a**', 'a*?', 'a*??', 'a+*', 'a?+', '*', '+a', '?', 'a|*', '(*)', '(?i)*',
  '^*', '$+', '\\b*', 'a$', '\\A', '\\z', '\\Z', '\\G', '\\b', '\\B', '\\C', '\\d\\D\\w\\W\\s\\S', '\\pL', '\\p{Greek}', '\\p{Foo}', '\\PL',
  '\\Q.*\\E', '\\Qa', '\\E', '[\\Q]\\E]', '\\1', '\\0', '\\01', '\\12', '\\8', '\\x41', '\\x4', '\\x{41}', '\\x{}', '\\x{110000}', '\\xff',
  '\\a\\f\\n\\r\\t\\v', '\\e', '\\cA', '\\_', '\\-', '\\/', '\\.', '\\<', '\\q', '\\', 'a\\', '(', ')', '(a', 'a)', '()', '(|a)', '(?:a)', '(?i)a', '(?i:a)',
  '(?is)a', '(?i-s)a', '(?-i)a', '(?-)a', '(?i-)a', '(?)', '(?:)', '(?m)a', '(?U)a', '(?x)a', '(?#c)', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(?>a)',
  '(?P<n>a)', '(?<n>a)', '(?P<n>a)(?P<n>b)', '(?P<>a)', '(?P<1>a)', '(?P<a-b>a)', '(?P=n)', '(?P>n)', '(?P<n', '(?|a)', '(*UTF)a', 'a++', 'a*+',
  '[\\b]', '[\\s]', '[\\S]', '[\\pL]', '[\\x41-\\x5a]', '[\\x5a-\\x41]', '[a-\\d]', '[\\d-z]', '[a-c-e]', '[\\w-]', '[^\\n]', '[\\0]', '[\\1]', '.',
];

/** Random patterns from regex-significant pieces. */
function randomPatterns(count: number): string[] {
  const pieces = ['a', 'b', '.', '*', '+', '?', '|', '(', ')', '[', ']', '^', '$', '-', '{', '}', '2', ',', '\\d', '\\b', '(?:', '(?i)', '(?P<n>', '\\x41', '\\', '{2,1}', '{3}', '[:alpha:]', '\\Q', '\\E', '0', '\\.', ':', '<', '=', '!', 'z'];
  let seed = 42;
  const next = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % pieces.length);
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let p = '';
    const len = 1 + (n % 7);
    for (let k = 0; k < len; k++) p += pieces[next()];
    out.push(p);
  }
  return out;
}

describe('regex: our RE2 reading agrees with the real RE2', () => {
  test.each(corpus)('%j', (pattern) => {
    const ours = regexVerdict(pattern);
    if (!re2Accepts(pattern)) expect(ours).toMatchObject({ ok: false });
    else if (!ours.ok) expect(ours).toMatchObject({ by: 'pcre' });
  });

  test('3000 random patterns', () => {
    const disagreements = randomPatterns(3000).filter((pattern) => {
      const ours = regexVerdict(pattern);
      return re2Accepts(pattern) ? !ours.ok && ours.by === 're2' : ours.ok;
    });
    expect(disagreements).toEqual([]);
  });
});
