/**
 * Bytes of code per language in one commit's tree, by the rules Gitea applies with go-enry
 * (a linguist port): vendored, documentation, generated and dot files are left out, as are
 * empty files and submodules; only programming and markup languages count, unless nothing
 * else is found (then the first other language found is reported); a language of a group
 * (TSX) counts for its group (TypeScript). Languages are known by file name, extension and,
 * for files without an extension, the script's `#!` line. The tree comes from one
 * `git ls-tree -r -l`; `.gitattributes` linguist overrides are not read.
 */
import { parseLsTree } from '../git/ls-tree';
import { runGit } from '../git/run';
import type { GitReader } from '../git/reader';

type Kind = 'programming' | 'markup' | 'data' | 'prose';

const L = (name: string, kind: Kind, ...exts: string[]) => exts.map((e) => [e, { name, kind }] as const);

const BY_EXTENSION = new Map<string, { name: string; kind: Kind }>([
  ...L('Go', 'programming', '.go'),
  ...L('Python', 'programming', '.py', '.pyw', '.pyi'),
  ...L('TypeScript', 'programming', '.ts', '.mts', '.cts', '.tsx'),
  ...L('JavaScript', 'programming', '.js', '.mjs', '.cjs', '.jsx'),
  ...L('Java', 'programming', '.java'),
  ...L('Kotlin', 'programming', '.kt', '.kts'),
  ...L('Rust', 'programming', '.rs'),
  ...L('C', 'programming', '.c', '.h'),
  ...L('C++', 'programming', '.cc', '.cpp', '.cxx', '.c++', '.hh', '.hpp', '.hxx', '.h++'),
  ...L('C#', 'programming', '.cs'),
  ...L('Ruby', 'programming', '.rb', '.rake', '.gemspec'),
  ...L('PHP', 'programming', '.php'),
  ...L('Swift', 'programming', '.swift'),
  ...L('Scala', 'programming', '.scala', '.sc'),
  ...L('Shell', 'programming', '.sh', '.bash', '.zsh', '.ksh'),
  ...L('PowerShell', 'programming', '.ps1', '.psm1'),
  ...L('Perl', 'programming', '.pl', '.pm'),
  ...L('Lua', 'programming', '.lua'),
  ...L('R', 'programming', '.r'),
  ...L('Objective-C', 'programming', '.m'),
  ...L('Dart', 'programming', '.dart'),
  ...L('Elixir', 'programming', '.ex', '.exs'),
  ...L('Erlang', 'programming', '.erl', '.hrl'),
  ...L('Haskell', 'programming', '.hs'),
  ...L('Clojure', 'programming', '.clj', '.cljs', '.cljc'),
  ...L('Groovy', 'programming', '.groovy'),
  ...L('HCL', 'programming', '.hcl', '.tf'),
  ...L('Nix', 'programming', '.nix'),
  ...L('Zig', 'programming', '.zig'),
  ...L('Julia', 'programming', '.jl'),
  ...L('OCaml', 'programming', '.ml', '.mli'),
  ...L('F#', 'programming', '.fs', '.fsx'),
  ...L('Visual Basic .NET', 'programming', '.vb'),
  ...L('Assembly', 'programming', '.asm', '.nasm'),
  ...L('Makefile', 'programming', '.mk', '.mak'),
  ...L('CMake', 'programming', '.cmake'),
  ...L('Dockerfile', 'programming', '.dockerfile'),
  ...L('Vim Script', 'programming', '.vim'),
  ...L('Emacs Lisp', 'programming', '.el'),
  ...L('Common Lisp', 'programming', '.lisp'),
  ...L('Fortran', 'programming', '.f90', '.f95'),
  ...L('Pascal', 'programming', '.pas'),
  ...L('Smarty', 'programming', '.tpl'),
  ...L('HTML', 'markup', '.html', '.htm', '.xhtml'),
  ...L('CSS', 'markup', '.css'),
  ...L('SCSS', 'markup', '.scss'),
  ...L('Sass', 'markup', '.sass'),
  ...L('Less', 'markup', '.less'),
  ...L('Vue', 'markup', '.vue'),
  ...L('Svelte', 'markup', '.svelte'),
  ...L('TeX', 'markup', '.tex'),
  ...L('Handlebars', 'markup', '.hbs', '.handlebars'),
  ...L('Go Template', 'markup', '.tmpl', '.gotmpl'),
  ...L('Markdown', 'prose', '.md', '.markdown'),
  ...L('Text', 'prose', '.txt'),
  ...L('reStructuredText', 'prose', '.rst'),
  ...L('AsciiDoc', 'prose', '.adoc'),
  ...L('JSON', 'data', '.json'),
  ...L('YAML', 'data', '.yml', '.yaml'),
  ...L('TOML', 'data', '.toml'),
  ...L('XML', 'data', '.xml'),
  ...L('CSV', 'data', '.csv'),
  ...L('INI', 'data', '.ini', '.cfg'),
  ...L('SQL', 'data', '.sql'),
  ...L('Protocol Buffer', 'data', '.proto'),
]);

const BY_NAME = new Map<string, { name: string; kind: Kind }>([
  ['Makefile', { name: 'Makefile', kind: 'programming' }],
  ['GNUmakefile', { name: 'Makefile', kind: 'programming' }],
  ['Dockerfile', { name: 'Dockerfile', kind: 'programming' }],
  ['CMakeLists.txt', { name: 'CMake', kind: 'programming' }],
  ['Rakefile', { name: 'Ruby', kind: 'programming' }],
  ['Gemfile', { name: 'Ruby', kind: 'programming' }],
  ['Jenkinsfile', { name: 'Groovy', kind: 'programming' }],
]);

const BY_INTERPRETER: [RegExp, { name: string; kind: Kind }][] = [
  [/^(ba|z|k|da)?sh$/, { name: 'Shell', kind: 'programming' }],
  [/^python[0-9.]*$/, { name: 'Python', kind: 'programming' }],
  [/^(node|nodejs|deno)$/, { name: 'JavaScript', kind: 'programming' }],
  [/^ruby$/, { name: 'Ruby', kind: 'programming' }],
  [/^perl$/, { name: 'Perl', kind: 'programming' }],
  [/^php$/, { name: 'PHP', kind: 'programming' }],
];

const VENDORED = [
  /(^|\/)vendor\//,
  /(^|\/)node_modules\//,
  /(^|\/)bower_components\//,
  /(^|\/)third[-_]?party\//,
  /(^|\/)Godeps\//,
  /(^|\/)\.yarn\//,
  /(^|\/)cache\//,
  /\.min\.(js|css)$/,
  /(^|\/)jquery([^/]*)\.js$/,
  /-vendor\.(js|css)$/,
];

const DOCUMENTATION = [
  /^[Dd]ocs?\//,
  /(^|\/)[Dd]ocumentation\//,
  /(^|\/)[Ee]xamples?\//,
  /^[Ss]amples?\//,
  /(^|\/)(CHANGE(S|LOG)?|CONTRIBUTING|COPYING|INSTALL|LICEN[CS]E|README|[Rr]eadme|[Cc]ontributing|[Cc]hangelog)(\.[^/]*)?$/,
];

const GENERATED = [/\.pb\.go$/, /_pb2\.py$/, /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Gopkg\.lock|composer\.lock|go\.sum|Cargo\.lock)$/, /\.designer\.cs$/];

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function byPath(p: string): { name: string; kind: Kind } | null {
  const base = basename(p);
  const named = BY_NAME.get(base);
  if (named) return named;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? BY_EXTENSION.get(base.slice(dot).toLowerCase()) ?? null : null;
}

function byShebang(head: string): { name: string; kind: Kind } | null {
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(head);
  if (!m) return null;
  let interpreter = basename(m[1]);
  if (interpreter === 'env' && m[2]) interpreter = basename(m[2]);
  return BY_INTERPRETER.find(([re]) => re.test(interpreter))?.[1] ?? null;
}

interface Blob {
  path: string;
  oid: string;
  size: number;
}

/** The regular files and symlinks of a commit's tree with their sizes (one git process). */
async function treeBlobs(repoPath: string, commit: string): Promise<Blob[]> {
  const out = await runGit(['ls-tree', '-r', '-l', '-z', '--end-of-options', commit], { cwd: repoPath });
  return parseLsTree(out)
    .filter((e) => e.type === 'blob')
    .map((e) => ({ path: e.path, oid: e.oid, size: e.size ?? 0 }));
}

/** Language name -> bytes, largest first. */
export async function languageStats(reader: GitReader, commit: string): Promise<[string, number][]> {
  const blobs = await treeBlobs(reader.repoPath, commit);
  const sizes = new Map<string, number>();
  let firstOther: string | null = null;
  let firstOtherSize = 0;
  const candidates: { blob: Blob; lang: { name: string; kind: Kind } | null }[] = [];
  for (const blob of blobs) {
    const p = blob.path;
    if (blob.size === 0) continue;
    if (VENDORED.some((re) => re.test(p)) || basename(p).startsWith('.') || DOCUMENTATION.some((re) => re.test(p)) || GENERATED.some((re) => re.test(p))) continue;
    candidates.push({ blob, lang: byPath(p) });
  }
  // Files without a known name or extension: their first line may name an interpreter.
  const unknown = candidates.filter((c) => c.lang === null && !basename(c.blob.path).includes('.') && c.blob.size < 1024 * 1024);
  const heads = await Promise.all(unknown.map((c) => reader.readBlob(c.blob.oid)));
  unknown.forEach((c, i) => (c.lang = heads[i] ? byShebang(heads[i]!.content.subarray(0, 256).toString('utf8')) : null));

  for (const { blob, lang } of candidates) {
    if (!lang) continue;
    if (lang.kind === 'programming' || lang.kind === 'markup') {
      sizes.set(lang.name, (sizes.get(lang.name) ?? 0) + blob.size);
    } else if (sizes.size === 0 && (firstOther === null || firstOther === lang.name)) {
      firstOther = lang.name;
      firstOtherSize += blob.size;
    }
  }
  if (sizes.size === 0 && firstOther) sizes.set(firstOther, firstOtherSize);
  return [...sizes.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
