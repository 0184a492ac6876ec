import execa from 'execa';
import { checkBranchRefFormat, checkRefFormat, isValidBranchName, isValidTagName, normalizeRefName, type CheckRefFormatOptions } from '../src/services/git/ref-names';
import { gitEnv } from '../src/services/git/run';

/** Names chosen to hit every rule of git's check_refname_format, plus ordinary ones. */
const NAMES = [
  'refs/heads/main', 'refs/heads/feature/x', 'refs/tags/v1.0.0', 'main', 'a/b', 'a/b/c/d', 'a-b_c.d', 'ünïcode/ñame', 'emoji/😀',
  '', '/', 'a/', '/a', 'a//b', '//a//b', 'a/./b', 'a/.b', '.a/b', 'a/b.', 'a/b..c', 'a/b.lock', 'a/b.lock/c', 'a.lock/b', 'a/lock',
  'a/b.lockx', 'a/.lock', 'a/@', '@', 'a/@{b', 'a/@b', 'a/{b}', 'a/b@', 'a/b c', 'a/b\tc', 'a/b\x7fc', 'a/b\x01', 'a/b~1', 'a/b^2',
  'a/b:c', 'a/b?', 'a/b*', 'a/*', 'a/*/b', 'a/**', 'a/b*c*', 'a/[b', 'a/b]', 'a/b\\c', 'a/-b', '-a/b', 'a/b-', 'refs/heads/HEAD',
  'HEAD', 'a/.', 'a/..', '..', '.', 'a/...b', 'a/b/', 'refs/heads/a..b', 'x/' + 'y'.repeat(300),
];

const git = (args: string[]) => execa('git', ['check-ref-format', ...args], { env: gitEnv(), extendEnv: false, reject: false });

async function gitAccepts(name: string, flags: string[]): Promise<boolean> {
  return (await git([...flags, name])).exitCode === 0;
}

describe('checkRefFormat agrees with `git check-ref-format`', () => {
  const variants: [string, string[], CheckRefFormatOptions][] = [
    ['plain', [], {}],
    ['--allow-onelevel', ['--allow-onelevel'], { allowOnelevel: true }],
    ['--refspec-pattern', ['--refspec-pattern'], { refspecPattern: true }],
    ['--normalize --allow-onelevel', ['--normalize', '--allow-onelevel'], { normalize: true, allowOnelevel: true }],
  ];
  for (const [label, flags, options] of variants) {
    it(`${label}: every name of the table`, async () => {
      const mismatches: string[] = [];
      for (const name of NAMES) {
        if (name.startsWith('-')) continue; // the command line would take it for an option
        const expected = await gitAccepts(name, flags);
        if (checkRefFormat(name, options) !== expected) mismatches.push(`${JSON.stringify(name)}: git ${expected ? 'accepts' : 'refuses'}`);
      }
      expect(mismatches).toEqual([]);
    });
  }

  it('--normalize prints what git prints', async () => {
    for (const name of ['//a//b', '/refs/heads//x', 'a/b']) {
      const r = await git(['--normalize', '--allow-onelevel', name]);
      expect(normalizeRefName(name)).toBe(r.stdout.trim());
    }
  });

  it('--branch: every name of the table that is not git shorthand', async () => {
    const mismatches: string[] = [];
    for (const name of NAMES) {
      if (name.startsWith('@')) continue; // `@`, `@{-1}` are expanded by git against a work tree
      const expected = await gitAccepts(name, ['--branch']);
      if (checkBranchRefFormat(name) !== expected) mismatches.push(`${JSON.stringify(name)}: git ${expected ? 'accepts' : 'refuses'}`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe("Gitea's branch and tag name rules", () => {
  it('accepts ordinary names and names with slashes', () => {
    for (const n of ['main', 'feature/login', 'release-1.2', 'v1.0.0', 'ünïcode']) expect(isValidBranchName(n)).toBe(true);
    for (const n of ['v1.0.0', 'release/2026.1', 'latest']) expect(isValidTagName(n)).toBe(true);
  });

  it('refuses what git or Gitea refuses, and names over 100 characters', () => {
    for (const n of ['', '@', 'a..b', 'a b', '-x', 'HEAD', 'a/', '/a', 'a.lock', '.hidden', 'x~1', 'x^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', 'a@{1}', 'a\0b', 'x'.repeat(101)]) {
      expect([n, isValidBranchName(n)]).toEqual([n, false]);
    }
    expect(isValidBranchName('x'.repeat(100))).toBe(true);
    for (const n of ['', 'a..b', 'v 1', '-v1', 'v1.lock', 'v1/']) expect([n, isValidTagName(n)]).toEqual([n, false]);
  });
});
