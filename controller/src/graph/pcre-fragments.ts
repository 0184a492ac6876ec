/**
 * PCRE fragments built from manifest values. Every character that is not a letter or a digit
 * is escaped, and bytes outside printable ASCII become \xHH, so a value can never change the
 * shape of the expression it sits in (nginx's PCRE runs without UTF mode: byte by byte).
 */

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

function isAlnum(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** A regex matching exactly `value` (as bytes). */
export function escapeRegex(value: string): string {
  let plain = true;
  for (let i = 0; i < value.length && plain; i++) {
    const c = value.charCodeAt(i);
    plain = c < 0x80 && isAlnum(c);
  }
  if (plain) return value;
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    if (isAlnum(byte)) out += String.fromCharCode(byte);
    else if (byte >= 0x20 && byte < 0x7f) out += '\\' + String.fromCharCode(byte);
    else out += '\\x' + hex(byte);
  }
  return out;
}

/**
 * A regex matching `value` as it may appear in a raw query string: each byte that is not a
 * letter or digit may also come percent-encoded (either hex case), and a space as "+".
 */
export function queryValueRegex(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    if (isAlnum(byte)) {
      out += String.fromCharCode(byte);
      continue;
    }
    const literal = byte >= 0x21 && byte < 0x7f ? '\\' + String.fromCharCode(byte) : '\\x' + hex(byte);
    const h = hex(byte);
    const encoded = '%' + [...h].map((c) => (/[a-f]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');
    out += byte === 0x20 ? `(?:\\+|${encoded})` : `(?:${literal}|${encoded})`;
  }
  return out;
}

/** Length of `text` inside an nginx double-quoted string (a backslash and a quote take two bytes). */
export function quotedLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 || c === 34) n++;
  }
  return n;
}
