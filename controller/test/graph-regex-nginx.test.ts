/**
 * The PCRE forms checkRegex hands to nginx match exactly what the original pattern matches
 * under the real RE2: every accepted pattern goes into a real nginx (PCRE2) as a map regex,
 * and for each subject the bits nginx answers are compared with RE2 (WASM) search results.
 * A path regex matched as the last field of a composite (model/matching.ts) answers as the same
 * regex anchored on the path alone, newlines in the path included.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import execa from 'execa';
import { WrappedRE2 } from 're2-wasm/build/wasm/re2';
import { checkRegex } from '../src/graph';
import { unanchoredPcre } from '../src/graph/regex';
import { composite } from '../src/model/matching';
import { quote } from '../src/render/format';
import { freePort } from '../../e2e/support/ports';
import { defaultNginxBinary } from '../src/apply/nginx-binary';

function re2Search(pattern: string, subject: string): boolean {
  const re = new WrappedRE2(pattern.replace(/\(\?<(?![=!])/g, '(?P<'), false, false, false);
  try {
    return re.match(subject, 0, false).index >= 0;
  } finally {
    (re as unknown as { delete(): void }).delete();
  }
}

const nginxString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

const curated = [
  'a', '^a', 'a$', '^$', 'ab|cd', '^(a|b)+$', '[a-c]{2,3}', '[^a]', '[]a]', '[a-]', '[[:alpha:]]+$', '[[:^digit:]]', '\\d+', '\\w\\W', '\\s', '\\S+$',
  '[\\s-]', '\\bab\\b', '\\Bb', '\\Aa', 'a\\z', '(?i)AB', '(?i:a)b', '(?s:a.b)', 'a.b', '\\Q.*\\E', '\\Qa$', '\\x41', '\\v', 'a\\tb', '\\.', '\\\\',
  'a*?b', 'a{2}', 'a{2,}', '(?P<x>a)b', '(?<y>b)c', 'a{0}b', '()', '(|a)b', '"', 'x"y', '\\{', '}', ']', '[\\]]', '[\\[]', '^[ -~]*$', '^/api/v[0-9]+/',
  '^.*$', '^[^/]+$', 'a|', '^(?:a|ab)c$', '[\\x41-\\x43]+', '[\\d\\s]', '(?i)[a-c]', '\\$', '[$^]', 'a\\-b',
];

/** Deterministic random patterns from regex pieces, kept when checkRegex accepts them. */
function randomAccepted(count: number): string[] {
  const pieces = ['a', 'b', '.', '*', '+', '?', '|', '(', ')', '[', ']', '^', '$', '-', '1', '2', '\\d', '\\s', '\\S', '\\b', '\\B', '(?:', '(?i)', '(?i:', '(?s)', '(?P<n>', '[^', '\\Q', '\\E', '\\.', ':', 'z', 'A', '\\-', '\\]', '\\t', '\\v', ' ', '\\w', '\\W', '{2}', '{1,2}', '[:alpha:]', '[[:digit:]]', 'x', '\\x41', '\\A', '\\z'];
  let seed = 99;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const out = new Set<string>();
  for (let tries = 0; out.size < count && tries < 100000; tries++) {
    let p = '';
    const len = 2 + (next() % 7);
    for (let j = 0; j < len; j++) p += pieces[next() % pieces.length];
    if (checkRegex(p).ok) out.add(p);
  }
  return [...out];
}

const patterns = [...curated, ...randomAccepted(300)];

// Header values: nginx trims surrounding whitespace, so no subject starts or ends with a space.
const subjects = ['a', 'b', 'ab', 'AB', 'aB', 'abc', 'aab', 'cd', 'x"y', 'a b', 'a\tb', 'a\u000bb', '123', 'a-b', '{', '}', ']', '[', '\\', 'a.b', 'a$', '$', '^',
  '.*', 'zzz', '/api/v12/x', '/api/vx', 'ABC', 'ac', 'abcc', 'x', 'a\u000c', '-', 'aa', 'b a', 'Ab', 'a:z', 'z', 'Aa1', 'a]', 'ba', 'a1b2'];

let prefix: string;
let nginx: execa.ExecaChildProcess | undefined;
let port: number;

beforeAll(async () => {
  prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-regex-nginx-'));
  port = await freePort();
  const maps = patterns
    .map((p, i) => {
      const check = checkRegex(p);
      if (!check.ok) throw new Error(`corpus pattern ${p} rejected: ${check.reason}`);
      return `map $http_x_subject $m${i} { ${nginxString('~' + check.pcre)} 1; default 0; }`;
    })
    .join('\n');
  const body = patterns.map((_, i) => `$m${i}`).join('');
  // The path regex as a flag on the path alone ($f) and as a composite's last field after the
  // method ($g; "x" when the pattern has no such form).
  const pathMaps = patterns
    .map((p, i) => {
      const check = checkRegex(p);
      if (!check.ok) throw new Error(p);
      const flag = `map $subject $f${i} { ${quote(`~^(?:${check.pcre})`)} 1; default 0; }`;
      const unanchored = unanchoredPcre(check.pcre);
      if (unanchored === undefined) return `${flag}\nmap $uri $g${i} { default x; }`;
      const c = composite([[{ field: '$request_method', test: 'equals', fragment: 'GET' }, { field: '$uri', test: 'regex', fragment: unanchored }]]);
      return `${flag}\nmap ${quote(c.key.replace('$uri', '$subject'))} $g${i} { ${quote('~' + c.regexes[0])} 1; default 0; }`;
    })
    .join('\n');
  const pathBits = patterns.map((_, i) => `$f${i}$g${i}`).join('');
  const endCheck = checkRegex('^/a$');
  const dotCheck = checkRegex('^/d.b$');
  if (!endCheck.ok || !dotCheck.ok) throw new Error('corpus');
  fs.mkdirSync(path.join(prefix, 'logs'));
  fs.writeFileSync(
    path.join(prefix, 'nginx.conf'),
    `worker_processes 1; pid ${prefix}/nginx.pid; error_log stderr;
events {}
http {
  access_log off; client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  map_hash_bucket_size 128;
  ${maps}
  ${pathMaps}
  map $uri $subject { "~^/u/((?s).*)" $1; default ""; }
  map $uri $end { ${nginxString('~' + endCheck.pcre)} 1; default 0; }
  map $uri $dot { ${nginxString('~' + dotCheck.pcre)} 1; default 0; }
  server { listen 127.0.0.1:${port}; location / { return 200 "${body}"; } location /a { return 200 "$end"; } location /d { return 200 "$dot"; } location /u/ { return 200 "${pathBits}"; } }
}
`,
  );
  nginx = execa(defaultNginxBinary(), ['-p', prefix + '/', '-c', path.join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { reject: false, all: true });
  for (let i = 0; i < 200 && nginx.exitCode === null; i++) {
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  nginx.kill('SIGKILL');
  throw new Error(`nginx did not start: ${(await nginx).all}`);
});

afterAll(async () => {
  if (nginx) {
    nginx.kill('SIGQUIT');
    await nginx;
  }
  fs.rmSync(prefix, { recursive: true, force: true });
});

function canConnect(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(p, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Raw HTTP so header values may hold bytes Node's client refuses (\v, \f). */
function ask(subject: string, target = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    s.on('data', (d) => (data += d.toString('latin1')));
    s.on('end', () => resolve(data.slice(data.indexOf('\r\n\r\n') + 4)));
    s.on('error', reject);
    s.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Subject: ${subject}\r\n\r\n`, 'latin1');
  });
}

test.each(subjects)('nginx (PCRE) and RE2 agree on subject %j for every accepted pattern', async (subject) => {
  const bits = await ask(subject);
  expect(bits).toHaveLength(patterns.length);
  const disagreements = patterns.filter((p, i) => (bits[i] === '1') !== re2Search(p, subject)).map((p) => `${p} (nginx ${bits[patterns.indexOf(p)]})`);
  expect(disagreements).toEqual([]);
});

test('"$" means the end of the text as in RE2: a path ending in a newline (%0A) does not match ^/a$', async () => {
  expect(re2Search('^/a$', '/a\n')).toBe(false);
  expect(await ask('x', '/a')).toBe('1');
  expect(await ask('x', '/a%0A')).toBe('0');
});

test('"." matches a carriage return but not a newline, in nginx as in RE2', async () => {
  expect([re2Search('^/d.b$', '/d\rb'), re2Search('^/d.b$', '/d\nb')]).toEqual([true, false]);
  expect(await ask('x', '/d%0Db')).toBe('1');
  expect(await ask('x', '/d%0Ab')).toBe('0');
});

// Subjects as paths (percent-encoded: nginx decodes $uri), newlines included.
const pathSubjects = [...subjects, 'a\nb', 'a\n', '\na', 'ab\nab', '\n', 'a\r\nb', 'b a\n', 'x\n\ny'];

test.each(pathSubjects)('a path regex as a composite\'s last field answers as on the path alone: %j', async (subject) => {
  const bits = await ask('x', '/u/' + [...Buffer.from(subject, 'latin1')].map((b) => '%' + b.toString(16).padStart(2, '0')).join(''));
  expect(bits).toHaveLength(2 * patterns.length);
  const differ = patterns.filter((_, i) => bits[2 * i + 1] !== 'x' && bits[2 * i] !== bits[2 * i + 1]).map((p) => `${p} (alone ${bits[2 * patterns.indexOf(p)]})`);
  expect(differ).toEqual([]);
});

test('most patterns have a composite form; those asserting the start past their beginning do not', () => {
  const forms = patterns.map((p) => unanchoredPcre((checkRegex(p) as { pcre: string }).pcre));
  expect(forms.filter((f) => f !== undefined).length).toBeGreaterThan(patterns.length / 2);
  expect(unanchoredPcre('^/api/v[0-9]+/')).toBe('/api/v[0-9]+/');
  expect(unanchoredPcre('a|^b')).toBeUndefined();
});
