/**
 * Formatting of values for nginx config text. Every value that comes from a manifest is
 * written as a double-quoted nginx string: nginx's parser turns `\\` into `\` and `\"` into `"`
 * inside quotes, so escaping those two makes the token read back as exactly the value, and a
 * value can never end its token and start a directive of its own.
 */

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function quote(value: string | number): string {
  const s = String(value);
  // nginx turns \n, \r, \t back into the control characters (dispatch composites use "\n").
  // JSON escapes exactly these five the same way; it differs only on other control characters
  // and lone surrogates (\uXXXX, which nginx does not read), so it is the fast path without them.
  // JSON writes those other characters as \b, \f or \uXXXX: without these three sequences in
  // its output (an escaped backslash before b, f or u only sends us to the exact check) the JSON
  // is the answer, with no scan of the value.
  const json = JSON.stringify(s);
  if ((json.indexOf('\\u') < 0 && json.indexOf('\\b') < 0 && json.indexOf('\\f') < 0) || !/[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]/.test(s)) return json;
  return '"' + s.replace(/[\\"\n\r\t]/g, (c) => ESCAPES[c]) + '"';
}

/** A comment line's text: printable characters only, so it cannot end the comment. */
export function comment(value: string): string {
  return String(value).replace(/[^\x20-\x7e]/g, '?');
}

/** A non-negative integer, or an error: numbers in directives are never free text. */
export function integer(value: unknown): string {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new Error(`expected a non-negative integer in the nginx model, got ${JSON.stringify(value)}`);
  }
  return String(value);
}

/** address:port for listen/server directives (IPv6 in brackets). */
export function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${integer(port)}`;
}

export function onOff(value: unknown): string {
  return value ? 'on' : 'off';
}

/**
 * A value nginx evaluates (proxy_set_header, add_header, set, return, rewrite replacement):
 * literal parts from manifests with every `$` written as ${pc_dollar} (a geo variable holding
 * "$", nginx.conf), variables as ${name} (so a following literal cannot extend the name), regex captures as $1..$9
 * (nginx reads one digit), quoted.
 */
export function complexValue(parts: unknown): string {
  if (!Array.isArray(parts)) throw new Error(`expected value parts in the nginx model, got ${JSON.stringify(parts)}`);
  let text = '';
  for (const p of parts) {
    if (typeof p === 'string') text += p.replace(/\$/g, '${pc_dollar}');
    else if (p && typeof p === 'object' && typeof (p as { v: unknown }).v === 'string' && /^[1-9]$/.test((p as { v: string }).v)) text += '$' + (p as { v: string }).v;
    else if (p && typeof p === 'object' && typeof (p as { v: unknown }).v === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test((p as { v: string }).v)) text += '${' + (p as { v: string }).v + '}';
    else throw new Error(`bad value part in the nginx model: ${JSON.stringify(p)}`);
  }
  return quote(text);
}

const IF_OPERATORS = new Set(['=', '!=', '~', '~*']);
export function ifOperator(op: string): string {
  if (!IF_OPERATORS.has(op)) throw new Error(`not an nginx if operator: ${JSON.stringify(op)}`);
  return op;
}

/** nginx identifiers we generate ourselves (upstream names, $variables, @locations). */
export function ident(value: string): string {
  if (!/^[@$]?[A-Za-z0-9_-]+$/.test(value)) throw new Error(`not an nginx identifier: ${JSON.stringify(value)}`);
  return value;
}
