import { quote } from '../src/render/format';

/** How nginx reads a double-quoted token (ngx_conf_read_token): \" \' \\ \t \r \n unescaped, other \x kept. */
function nginxUnquote(token: string): string {
  if (!(token.startsWith('"') && token.endsWith('"') && token.length >= 2)) throw new Error(`not a quoted token: ${token}`);
  let out = '';
  for (let i = 1; i < token.length - 1; i++) {
    const c = token[i];
    if (c === '"') throw new Error(`unescaped quote inside ${JSON.stringify(token)}`);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = token[++i];
    out += next === 't' ? '\t' : next === 'r' ? '\r' : next === 'n' ? '\n' : next === '"' || next === "'" || next === '\\' ? next : `\\${next}`;
  }
  return out;
}

test('quote(): nginx reads every value back exactly, whatever characters it holds', () => {
  const alphabet = ['a', 'u', 'b', 'f', 'n', '\\', '"', "'", '\n', '\r', '\t', '\x00', '\x08', '\x0b', '\x0c', '\x1f', '\x7f', '\ud800', '\udc00', '\ud83d\ude00', 'é', '$', '{', ';', ' '];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  for (let i = 0; i < 50000; i++) {
    let s = '';
    const len = Math.floor(rnd() * 10);
    for (let k = 0; k < len; k++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    const token = quote(s);
    if (nginxUnquote(token) !== s) throw new Error(`${JSON.stringify(s)} written as ${token}`);
  }
  expect(quote(8080)).toBe('"8080"');
});
