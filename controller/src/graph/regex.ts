/**
 * Regular expressions in routes use RE2 syntax (Gateway API), but nginx runs them with PCRE2.
 * A pattern is accepted only if RE2 accepts it AND PCRE2 reads it the same way; a few
 * constructs that both accept but read differently are rewritten into an equivalent form
 * (`$` -> `\z`, `\s` -> `[\t\n\f\r ]`, `\v` -> `\x0b`), everything else that differs is rejected.
 *
 * Known remaining difference (documented, not rejectable): RE2 steps over a whole UTF-8
 * character where nginx's PCRE (no UTF mode) steps over one byte, so `.` or `[^x]` against
 * non-ASCII request bytes may match a different number of bytes.
 */
import { WrappedRE2 } from 're2-wasm/build/wasm/re2';

export type RegexCheck = { ok: true; pcre: string } | { ok: false; reason: string };

const cache = new Map<string, RegexCheck>();

/** RE2's own verdict (the C++ library compiled to WASM). */
function re2Error(pattern: string): string | undefined {
  // RE2 builds older than 2023 lack the `(?<name>` spelling that RE2 and Go accept today.
  const spelled = pattern.replace(/\(\?<(?![=!])/g, '(?P<');
  const re = new WrappedRE2(spelled, false, false, false);
  try {
    return re.ok() ? undefined : re.error();
  } finally {
    (re as unknown as { delete(): void }).delete(); // embind objects live in WASM memory until deleted
  }
}

const SPACE_CLASS_BODY = '\\t\\n\\f\\r ';

class Rejection extends Error {}

function reject(reason: string): never {
  throw new Rejection(reason);
}

/** `\xHH` or `\x{H...}` starting at i (pointing at the `x`); returns [text, next index]. */
function hexEscape(p: string, i: number): [string, number] {
  let digits: string;
  let end: number;
  if (p[i + 1] === '{') {
    end = p.indexOf('}', i + 2);
    digits = p.slice(i + 2, end);
    end += 1;
  } else {
    digits = p.slice(i + 1, i + 3);
    end = i + 3;
  }
  if (parseInt(digits, 16) > 0x7f) {
    reject(`\\x${p.slice(i + 1, end)} is not ASCII: RE2 reads it as a UTF-8 character, nginx's PCRE as one byte`);
  }
  return ['\\' + p.slice(i, end), end];
}

/** Translate one escape at p[i] === '\\'. Returns [pcre text, next index]. */
function escape(p: string, i: number, inClass: boolean): [string, number] {
  const c = p[i + 1];
  if (c >= '0' && c <= '9') reject(`\\${c}: numeric escapes are octal in RE2 but may be back-references in PCRE; write \\xHH`);
  switch (c) {
    case 'x':
      return hexEscape(p, i + 1);
    case 'p':
    case 'P':
      return reject(`\\${c}: Unicode classes work on characters in RE2 and on bytes in nginx's PCRE`);
    case 'C':
      return reject('\\C (any byte) is not supported');
    case 's':
      return [inClass ? SPACE_CLASS_BODY : `[${SPACE_CLASS_BODY}]`, i + 2];
    case 'S':
      if (inClass) reject('\\S inside a character class is not supported (PCRE includes \\v in \\s, RE2 does not)');
      return [`[^${SPACE_CLASS_BODY}]`, i + 2];
    case 'v':
      return ['\\x0b', i + 2];
    case 'Q': {
      if (inClass) reject('\\Q inside a character class is not supported');
      const end = p.indexOf('\\E', i + 2);
      const stop = end < 0 ? p.length : end + 2;
      return [p.slice(i, stop), stop];
    }
    default:
      return [p.slice(i, i + 2), i + 2];
  }
}

/** Character class starting at p[i] === '['. */
function charClass(p: string, i: number): [string, number] {
  let out = '[';
  let j = i + 1;
  if (p[j] === '^') {
    out += '^';
    j++;
  }
  if (p[j] === ']') {
    out += ']';
    j++;
  }
  while (j < p.length && p[j] !== ']') {
    if (p[j] === '\\') {
      const [text, next] = escape(p, j, true);
      out += text;
      j = next;
    } else if (p[j] === '[' && p[j + 1] === ':') {
      const end = p.indexOf(':]', j + 2);
      out += p.slice(j, end + 2);
      j = end + 2;
    } else {
      out += p[j++];
    }
  }
  return [out + ']', j + 1];
}

const QUANTIFIER_RE = /^\{\d+(,\d*)?\}/;

function group(p: string, i: number): [string, number] {
  if (p[i + 1] !== '?') return ['(', i + 1];
  const flags = /^\(\?([a-zA-Z-]*)[:)]/.exec(p.slice(i));
  if (flags) {
    if (/[mU]/.test(flags[1])) {
      reject(`(?${flags[1]}): only the i and s flags are supported (m and U change how $ and repetitions read)`);
    }
    return [flags[0], i + flags[0].length];
  }
  return ['(?', i + 2]; // named groups: (?P<name> and (?<name> read the same in both
}

function translate(p: string): string {
  let out = '';
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    let text: string;
    if (c === '\\') [text, i] = escape(p, i, false);
    else if (c === '[') [text, i] = charClass(p, i);
    else if (c === '(') [text, i] = group(p, i);
    else if (c === '{') {
      const q = QUANTIFIER_RE.exec(p.slice(i));
      if (!q) reject(`a literal "{" must be written \\{ (PCRE versions read "{,n}" differently)`);
      text = q[0];
      i += q[0].length;
    } else if (c === '$') {
      // Without the m flag RE2's $ is the end of the text; PCRE's also matches before a final newline.
      text = '\\z';
      i++;
    } else {
      text = c;
      i++;
    }
    out += text;
  }
  return out;
}

/**
 * Check a RegularExpression value. On success `pcre` is the form to give nginx (same meaning
 * under PCRE2 as `pattern` under RE2); on failure `reason` says why, for the route's status.
 */
export function checkRegex(pattern: string): RegexCheck {
  const cached = cache.get(pattern);
  if (cached) return cached;
  let result: RegexCheck;
  const bad = /[^\x20-\x7e]/.exec(pattern);
  if (bad) {
    const code = bad[0].charCodeAt(0);
    result = {
      ok: false,
      reason:
        code < 0x20 || code === 0x7f
          ? `control character U+${code.toString(16).padStart(4, '0')} is not allowed; use an escape such as \\t`
          : `non-ASCII character "${bad[0]}" is not supported: RE2 reads it as one UTF-8 character, nginx's PCRE as several bytes`,
    };
  } else {
    const error = re2Error(pattern);
    if (error) result = { ok: false, reason: `invalid RE2 syntax: ${error}` };
    else {
      try {
        result = { ok: true, pcre: translate(pattern) };
      } catch (e) {
        if (!(e instanceof Rejection)) throw e;
        result = { ok: false, reason: e.message };
      }
    }
  }
  if (cache.size > 10000) cache.clear();
  cache.set(pattern, result);
  return result;
}
