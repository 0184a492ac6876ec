import { checkRegex } from '../src/graph';
import { unanchoredPcre } from '../src/graph/regex';

describe('regex: accepted when RE2 accepts it and PCRE reads it the same', () => {
  const accepted: [string, string, string][] = [
    ['plain alternation', '/v(1|2)/.*', '/v(1|2)/.*'],
    ['character classes and counted repetition', '/[a-z0-9]{2,8}/[[:digit:]]+', '/[a-z0-9]{2,8}/[[:digit:]]+'],
    ['$ becomes \\z (PCRE $ also matches before a final newline)', '^/exact$', '^/exact\\z'],
    ['$ inside a class stays literal', '/price[$]', '/price[$]'],
    ['\\Q...\\E is literal in both; $ inside it untouched', '\\Q/a$b\\E$', '\\Q/a$b\\E\\z'],
    ['\\Q open to the end is closed (the form is wrapped in a group)', '/a\\Q.)', '/a\\Q.)\\E'],
    ['\\s becomes the RE2 set (PCRE adds \\v)', 'a\\sb', 'a[\\t\\n\\f\\r ]b'],
    ['\\s inside a class is expanded', '[\\s,]', '[\\t\\n\\f\\r ,]'],
    ['\\S becomes the negated RE2 set', '\\S+', '[^\\t\\n\\f\\r ]+'],
    ['\\v is the vertical tab in RE2, a class in PCRE', 'a\\vb', 'a\\x0bb'],
    ['case-insensitive flag', '(?i)/api', '(?i)/api'],
    ['flag group with s', '(?s:a.b)', '(?s:a.b)'],
    ['named groups in both spellings', '(?P<v>[0-9]+)-(?<w>x)', '(?P<v>[0-9]+)-(?<w>x)'],
    ['ASCII hex escape', '\\x41', '\\x41'],
    ['escaped brace', 'a\\{2\\}', 'a\\{2\\}'],
    ['lazy quantifier', 'a+?b', 'a+?b'],
    ['word boundary and \\A / \\z', '\\A/a\\b.*\\z', '\\A/a\\b.*\\z'],
  ];
  test.each(accepted)('%s', (_name, pattern, pcre) => {
    expect(checkRegex(pattern)).toEqual({ ok: true, pcre });
  });

  const rejected: [string, string, RegExp][] = [
    ['lookahead', '/a(?=b)', /invalid RE2 syntax: invalid perl operator/],
    ['lookbehind', '(?<=a)b', /invalid RE2 syntax/],
    ['backreference', '(a)\\1', /invalid RE2 syntax: invalid escape sequence: \\1/],
    ['possessive quantifier', 'a++', /invalid RE2 syntax: bad repetition operator/],
    ['atomic group', '(?>a)', /invalid RE2 syntax/],
    ['\\Z (PCRE: before final newline; not RE2)', 'a\\Z', /invalid RE2 syntax/],
    ['unbalanced parenthesis', '/a(b', /invalid RE2 syntax: missing \)/],
    ['repetition over 1000', 'a{1001}', /invalid RE2 syntax: invalid repetition size/],
    ['octal escape (PCRE may read a back-reference)', '\\12', /octal escapes may read as back-references/],
    ['multiline flag', '(?m)^a$', /only the i and s flags/],
    ['ungreedy flag', '(?U)a*', /only the i and s flags/],
    ['Unicode class', '\\pL', /Unicode classes/],
    ['any-byte escape', '\\C', /\\C/],
    ['non-ASCII hex escape', '\\xe9', /not ASCII/],
    ['non-ASCII literal', '/café', /non-ASCII character "é"/],
    ['control character', 'a\nb', /control character U\+000a/],
    ['literal brace PCRE versions disagree on', 'a{,3}', /literal "\{" must be written/],
    ['POSIX syntax outside brackets', '[:alpha:]', /outside a bracket expression/],
    ['POSIX syntax outside brackets with an escaped ]', '[:a\\]b:]', /outside a bracket expression/],
    ['\\S inside a class', '[\\S]', /\\S inside a character class/],
    ['PCRE start-of-pattern verb', '(*UTF)a', /invalid RE2 syntax/],
  ];
  test.each(rejected)('rejects %s', (_name, pattern, reason) => {
    const result = checkRegex(pattern);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  test('the PCRE form matches the same strings as RE2 reads the original (JS RegExp as a stand-in for PCRE)', () => {
    const r = checkRegex('^/a\\s[0-9]+$');
    if (!r.ok) throw new Error(r.reason);
    const js = new RegExp(r.pcre.replace('\\z', '$(?![\\s\\S])'));
    expect(js.test('/a 12')).toBe(true);
    expect(js.test('/a\u000b12')).toBe(false);
    expect(js.test('/a 12x')).toBe(false);
  });
});

describe('a PCRE form matched after other text (a composite\'s last field) keeps its meaning', () => {
  const pcre = (pattern: string) => {
    const r = checkRegex(pattern);
    if (!r.ok) throw new Error(r.reason);
    return r.pcre;
  };
  test.each([
    ['no start assertion: unchanged', '/r1/items/[0-9]+', '/r1/items/[0-9]+'],
    ['a leading ^ is dropped (the caller anchors the field)', '^/api/v[0-9]+$', '/api/v[0-9]+\\z'],
    ['a leading \\A is dropped', '\\A/a', '/a'],
    ['^ inside a class is no assertion', '/[^/]+/x', '/[^/]+/x'],
    ['an escaped ^ is no assertion', '/a\\^b', '/a\\^b'],
    ['^ inside \\Q...\\E is literal', '\\Q/a^\\E', '\\Q/a^\\E'],
    ['\\b and \\z stay (they read the same after a newline and at the end)', '/a\\b.*$', '/a\\b.*\\z'],
  ])('%s', (_name, pattern, expected) => {
    expect(unanchoredPcre(pcre(pattern))).toBe(expected);
  });

  test.each([
    ['^ after an alternative', '/a|^/b'],
    ['^ inside a group after text', '/a(^b)?'],
    ['\\A after text', '/a\\A'],
    ['^ twice', '^^/a'],
  ])('a start assertion elsewhere has no such form: %s', (_name, pattern) => {
    expect(unanchoredPcre(pcre(pattern))).toBeUndefined();
  });
});
