/**
 * Regular expressions in routes use RE2 syntax (Gateway API), but nginx runs them with PCRE2.
 * checkRegex parses a pattern the way RE2 does (same acceptance; proven against the real RE2,
 * compiled to WASM, in controller/test/graph-regex-re2.test.ts) and, in the same pass:
 * - rewrites what both accept but read differently into an equivalent PCRE form:
 *   `$` -> `\z` (PCRE's `$` also matches before a final newline), `\s` -> `[\t\n\f\r ]`
 *   (PCRE's `\s` includes \v), `\v` -> `\x0b` (PCRE's `\v` is a class);
 * - rejects what PCRE reads differently or refuses (octal escapes, non-ASCII, Unicode classes,
 *   the m/U flags, literal `{`, quantified assertions, class escapes as range ends, POSIX
 *   forms PCRE refuses, group names PCRE refuses, nesting deeper than PCRE's 250).
 *
 * Known remaining difference (documented, not rejectable): RE2 steps over a whole UTF-8
 * character where nginx's PCRE (no UTF mode) steps over one byte, so `.` or `[^x]` against
 * non-ASCII request bytes may consume a different number of bytes.
 */

export type RegexCheck = { ok: true; pcre: string } | { ok: false; reason: string };

/** Which engine's rule refused the pattern (tests check RE2 agreement with this). */
export type RegexVerdict = { ok: true; pcre: string } | { ok: false; by: 're2' | 'pcre'; reason: string };

const POSIX_CLASSES = new Set(['alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit']);
const SPACE_SET = '\\t\\n\\f\\r ';
/** RE2 refuses deeper nesting at 1000; PCRE2's default parenthesis limit is 250. */
const PCRE_MAX_DEPTH = 250;
const RE2_MAX_REPEAT = 1000;

class Refusal extends Error {
  constructor(readonly by: 're2' | 'pcre', message: string) {
    super(message);
  }
}
const re2Error = (message: string): never => {
  throw new Refusal('re2', message);
};
const pcreError = (message: string): never => {
  throw new Refusal('pcre', message);
};

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isOctal = (c: string | undefined) => c !== undefined && c >= '0' && c <= '7';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isAlnum = (c: string) => /^[0-9A-Za-z]$/.test(c);

/** One parsed character of a class range end or a literal escape. */
interface Char {
  code: number;
  /** PCRE text for it. */
  text: string;
  end: number;
}

type Last = 'none' | 'flags' | 'atom' | 'assert' | 'repeat';

interface Frame {
  /** Largest product of counted repetitions on any path inside this group so far. */
  maxProduct: number;
}

class Parser {
  private i = 0;
  private out = '';
  private last: Last = 'none';
  /** Product of counted repetitions inside the last complete item (1 for a plain atom). */
  private lastProduct = 1;
  private lastOp = '';
  private readonly frames: Frame[] = [{ maxProduct: 1 }];
  private readonly names = new Set<string>();
  /** Where in the output a start-of-text assertion (`^` or `\A`) was written. */
  readonly starts: number[] = [];

  constructor(private readonly p: string) {}

  run(): string {
    const p = this.p;
    while (this.i < p.length) {
      const c = p[this.i];
      switch (c) {
        case '(':
          this.openGroup();
          break;
        case ')':
          this.closeGroup();
          break;
        case '|':
          this.emit('|', 'none');
          this.i++;
          break;
        case '*':
        case '+':
        case '?':
          this.repeat(c, 1);
          break;
        case '{':
          this.brace();
          break;
        case '[':
          this.charClass();
          break;
        case '\\':
          this.escape();
          break;
        case '^':
          this.starts.push(this.out.length);
          this.emit('^', 'assert');
          this.i++;
          break;
        case '$':
          this.emit('\\z', 'assert');
          this.i++;
          break;
        default:
          this.atom(c);
          this.i++;
      }
    }
    if (this.frames.length > 1) re2Error(`missing ): ${p}`);
    return this.out;
  }

  private emit(text: string, last: Last): void {
    this.out += text;
    this.last = last;
    this.lastProduct = 1;
  }

  private atom(text: string): void {
    this.emit(text, 'atom');
    this.note(1);
  }

  private note(product: number): void {
    const frame = this.frames[this.frames.length - 1];
    frame.maxProduct = Math.max(frame.maxProduct, product);
    this.lastProduct = product;
  }

  // ---------------------------------------------------------------- groups

  private openGroup(): void {
    const p = this.p;
    if (p[this.i + 1] === '?') {
      const rest = p.slice(this.i);
      const named = /^\(\?P?<(?![=!])/.exec(rest);
      if (named) return this.namedGroup(named[0].length);
      if (rest.startsWith('(?P')) re2Error(`invalid named capture group: ${rest.slice(0, 4)}`);
      return this.flagGroup();
    }
    this.push('(');
    this.i++;
  }

  private push(text: string): void {
    if (this.frames.length > PCRE_MAX_DEPTH) pcreError(`groups nest deeper than ${PCRE_MAX_DEPTH}, PCRE's limit`);
    this.frames.push({ maxProduct: 1 });
    this.emit(text, 'none');
  }

  private namedGroup(prefixLength: number): void {
    const p = this.p;
    const start = this.i + prefixLength;
    const end = p.indexOf('>', start);
    if (end < 0) re2Error(`invalid named capture group: ${p.slice(this.i)}`);
    const name = p.slice(start, end);
    if (!/^[A-Za-z0-9_]+$/.test(name)) re2Error(`invalid named capture group: ${p.slice(this.i, end + 1)}`);
    if (this.names.has(name)) pcreError(`duplicate group name "${name}" (refused by PCRE and by current RE2)`);
    if (isDigit(name[0])) pcreError(`group name "${name}" starts with a digit, which PCRE refuses`);
    if (name.length > 32) pcreError(`group name "${name}" is longer than PCRE's 32 characters`);
    this.names.add(name);
    this.push(p.slice(this.i, end + 1));
    this.i = end + 1;
  }

  /** `(?flags)` or `(?flags:` as RE2 reads them; only i and s are let through. */
  private flagGroup(): void {
    const p = this.p;
    let j = this.i + 2;
    let negated = false;
    let sawFlag = false;
    for (;;) {
      const c = p[j];
      if (c === undefined) re2Error(`missing ): ${p}`);
      if (c === 'i' || c === 's' || c === 'm' || c === 'U') {
        sawFlag = true;
        j++;
      } else if (c === '-') {
        if (negated) re2Error(`invalid perl operator: ${p.slice(this.i, j + 1)}`);
        negated = true;
        sawFlag = false;
        j++;
      } else if (c === ':' || c === ')') {
        break;
      } else {
        re2Error(`invalid perl operator: ${p.slice(this.i, j + 1)}`);
      }
    }
    if (negated && !sawFlag) re2Error(`invalid perl operator: ${p.slice(this.i, j + 1)}`);
    const flags = p.slice(this.i + 2, j);
    if (/[mU]/.test(flags)) pcreError(`(?${flags}): only the i and s flags are supported (m and U change how $ and repetitions read)`);
    const text = p.slice(this.i, j + 1);
    this.i = j + 1;
    if (p[j] === ':') this.push(text);
    else {
      if (flags === '') pcreError('(?) sets no flag; remove it');
      this.emit(text, 'flags');
    }
  }

  private closeGroup(): void {
    if (this.frames.length === 1) re2Error(`unexpected ): ${this.p}`);
    const frame = this.frames.pop() as Frame;
    this.emit(')', 'atom');
    this.i++;
    this.note(frame.maxProduct);
  }

  // ---------------------------------------------------------------- repetition

  /**
   * Apply a repetition operator, with RE2's checks in RE2's order: stacked operators, counted
   * sizes, missing argument, then the product of nested counts (at most 1000).
   */
  private repeat(op: string, count: number, sizeError?: string): void {
    const p = this.p;
    let text = op;
    let end = this.i + op.length;
    if (p[end] === '?') {
      text += '?';
      end++;
    }
    if (this.last === 'repeat') re2Error(`bad repetition operator: ${this.lastOp}${text}`);
    if (sizeError) re2Error(sizeError);
    if (this.last === 'flags') pcreError(`${op} after a flag group repeats nothing in PCRE`);
    if (this.last === 'none') re2Error(`missing argument to repetition operator: ${text}`);
    if (this.last === 'assert') pcreError(`${op} after an assertion (^, $, \\b, \\A, \\z) is refused by PCRE`);
    const product = this.lastProduct * (count > 0 ? count : 1);
    if (product > RE2_MAX_REPEAT) re2Error(`bad repetition operator: ${op}`);
    this.out += text;
    this.i = end;
    this.note(product);
    this.last = 'repeat';
    this.lastOp = text;
  }

  private brace(): void {
    const m = /^\{(0|[1-9][0-9]{0,7})(,(0|[1-9][0-9]{0,7})?)?\}/.exec(this.p.slice(this.i));
    if (!m) {
      // RE2 reads it as a literal; PCRE versions disagree ({,n} became a quantifier in 10.43).
      pcreError('a literal "{" must be written \\{');
      return;
    }
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === undefined ? -1 : Number(m[3]);
    const bad = min > RE2_MAX_REPEAT || max > RE2_MAX_REPEAT || (max >= 0 && max < min);
    this.repeat(m[0], max >= 0 ? max : min, bad ? `invalid repetition size: ${m[0]}` : undefined);
  }

  // ---------------------------------------------------------------- escapes

  private escape(): void {
    const p = this.p;
    const c = p[this.i + 1];
    if (c === undefined) re2Error('trailing \\');
    switch (c) {
      case 'A':
      case 'z':
      case 'b':
      case 'B':
        if (c === 'A') this.starts.push(this.out.length);
        this.emit(`\\${c}`, 'assert');
        this.i += 2;
        return;
      case 'C':
        pcreError('\\C (any byte) is not supported');
        return;
      case 'Q': {
        const end = p.indexOf('\\E', this.i + 2);
        const stop = end < 0 ? p.length : end + 2;
        const literal = p.slice(this.i + 2, end < 0 ? p.length : end);
        if (literal.length > 0) {
          // Closed even where the pattern leaves it open (to its end): the form is wrapped in a
          // group, `(?:\Qa)`, whose ")" an open \Q would read as a literal.
          this.out += end < 0 ? `${p.slice(this.i)}\\E` : p.slice(this.i, stop);
          this.last = 'atom';
          this.note(1);
        }
        this.i = stop;
        return;
      }
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        this.atom(`\\${c}`);
        this.i += 2;
        return;
      case 's':
        this.atom(`[${SPACE_SET}]`);
        this.i += 2;
        return;
      case 'S':
        this.atom(`[^${SPACE_SET}]`);
        this.i += 2;
        return;
      case 'p':
      case 'P':
        pcreError(`\\${c}: Unicode classes work on characters in RE2 and on bytes in nginx's PCRE`);
        return;
    }
    const ch = this.literalEscape(this.i);
    this.atom(ch.text);
    this.i = ch.end;
  }

  /** A `\` escape standing for one character, as RE2's ParseEscape reads it. */
  private literalEscape(at: number): Char {
    const p = this.p;
    const c = p[at + 1];
    if (c === undefined) re2Error('trailing \\');
    if (c >= '1' && c <= '7' && !isOctal(p[at + 2])) re2Error(`invalid escape sequence: \\${c}`);
    if (isOctal(c)) {
      let end = at + 2;
      while (end < at + 4 && isOctal(p[end])) end++;
      pcreError(`\\${p.slice(at + 1, end)}: octal escapes may read as back-references in PCRE; write \\xHH`);
    }
    if (c === 'x') return this.hexEscape(at);
    const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
    if (c in simple) return { code: simple[c], text: c === 'v' ? '\\x0b' : `\\${c}`, end: at + 2 };
    if (c.charCodeAt(0) < 0x80 && !isAlnum(c)) return { code: c.charCodeAt(0), text: `\\${c}`, end: at + 2 };
    return re2Error(`invalid escape sequence: \\${c}`);
  }

  private hexEscape(at: number): Char {
    const p = this.p;
    let j = at + 2;
    let code = 0;
    if (p[j] === '{') {
      j++;
      let digits = 0;
      while (isHex(p[j])) {
        code = code * 16 + parseInt(p[j], 16);
        if (code > 0x10ffff) re2Error(`invalid escape sequence: ${p.slice(at, j + 1)}`);
        digits++;
        j++;
      }
      if (p[j] !== '}' || digits === 0) re2Error(`invalid escape sequence: ${p.slice(at, j + 1)}`);
      j++;
    } else {
      if (!isHex(p[j]) || !isHex(p[j + 1])) re2Error(`invalid escape sequence: ${p.slice(at, j + 2)}`);
      code = parseInt(p.slice(j, j + 2), 16);
      j += 2;
    }
    if (code > 0x7f) pcreError(`${p.slice(at, j)} is not ASCII: RE2 reads it as a UTF-8 character, nginx's PCRE as one byte`);
    return { code, text: p.slice(at, j), end: j };
  }

  // ---------------------------------------------------------------- character classes

  private charClass(): void {
    const p = this.p;
    const start = this.i;
    let j = this.i + 1;
    let out = '[';
    if (p[j] === '^') {
      out += '^';
      j++;
    }
    const posixEnd = pcrePosixSyntaxEnd(p, start + 1);
    if (posixEnd >= 0) {
      const text = p.slice(start, posixEnd + 2);
      pcreError(`${text}: PCRE refuses POSIX class syntax outside a bracket expression; write [${text}]`);
    }
    let first = true;
    /** The previous item was a class (\d, [:alpha:]...) or a range: a following '-' is ambiguous in PCRE. */
    let afterSet = false;
    while (j < p.length && (p[j] !== ']' || first)) {
      first = false;
      if (afterSet && p[j] === '-' && j + 1 < p.length && p[j + 1] !== ']') {
        pcreError(`"-" after a class or a range inside [...] is read differently by PCRE; escape it as \\-`);
      }
      afterSet = false;
      if (p[j] === '[' && p[j + 1] === ':') {
        const end = p.indexOf(':]', j + 2);
        if (end >= 0) {
          const name = p.slice(j + 2, end);
          if (!POSIX_CLASSES.has(name.replace(/^\^/, ''))) re2Error(`invalid character class range: ${p.slice(j, end + 2)}`);
          out += p.slice(j, end + 2);
          j = end + 2;
          afterSet = true;
          continue;
        }
      }
      if (p[j] === '[' && (p[j + 1] === '.' || p[j + 1] === '=')) pcreError(`"[${p[j + 1]}" inside a class is a POSIX collating element to PCRE; escape the "["`);
      if (p[j] === '\\') {
        const c = p[j + 1];
        if (c === 'd' || c === 'D' || c === 'w' || c === 'W') {
          out += `\\${c}`;
          j += 2;
          afterSet = true;
          continue;
        }
        if (c === 's') {
          out += SPACE_SET;
          j += 2;
          afterSet = true;
          continue;
        }
        if (c === 'S') pcreError('\\S inside a character class is not supported (PCRE includes \\v in \\s, RE2 does not)');
        if (c === 'p' || c === 'P') pcreError(`\\${c}: Unicode classes work on characters in RE2 and on bytes in nginx's PCRE`);
      }
      const lo = this.classChar(j);
      j = lo.end;
      if (p[j] === '-' && j + 1 < p.length && p[j + 1] !== ']') {
        const hi = this.classChar(j + 1);
        if (hi.code < lo.code) re2Error(`invalid character class range: ${p.slice(lo.end - (lo.text.length || 1), hi.end)}`);
        out += `${lo.text}-${hi.text}`;
        j = hi.end;
        afterSet = true;
      } else {
        out += lo.text;
      }
    }
    if (j >= p.length) re2Error(`missing closing ]: ${p.slice(start)}`);
    this.i = j + 1;
    this.atom(`${out}]`);
  }

  private classChar(at: number): Char {
    const p = this.p;
    if (at >= p.length) re2Error(`missing closing ]: ${p}`);
    if (p[at] === '\\') {
      if (p[at + 1] === undefined) re2Error(`missing closing ]: ${p}`);
      return this.literalEscape(at);
    }
    // '[' and '^' are literal here in both engines; escape them for PCRE when ambiguous.
    const c = p[at];
    return { code: c.charCodeAt(0), text: c === '[' ? '\\[' : c, end: at + 1 };
  }
}

/**
 * PCRE2's check_posix_syntax: at p[at] one of ':', '.', '=' right after '['; returns the index
 * of the closing terminator (the char before ']') when PCRE would read POSIX syntax, else -1.
 */
function pcrePosixSyntaxEnd(p: string, at: number): number {
  const terminator = p[at];
  if (terminator !== ':' && terminator !== '.' && terminator !== '=') return -1;
  for (let i = at + 1; p.length - i >= 2; i++) {
    if (p[i] === '\\' && (p[i + 1] === ']' || p[i + 1] === '\\')) i++;
    else if ((p[i] === '[' && p[i + 1] === terminator) || p[i] === ']') return -1;
    else if (p[i] === terminator && p[i + 1] === ']') return i;
  }
  return -1;
}

const cache = new Map<string, RegexVerdict>();

/** The full verdict, saying which engine's rule refused a pattern. */
export function regexVerdict(pattern: string): RegexVerdict {
  const cached = cache.get(pattern);
  if (cached) return cached;
  let result: RegexVerdict;
  const bad = /[^\x20-\x7e]/.exec(pattern);
  if (bad) {
    const code = bad[0].charCodeAt(0);
    result = {
      ok: false,
      by: 'pcre',
      reason:
        code < 0x20 || code === 0x7f
          ? `control character U+${code.toString(16).padStart(4, '0')} is not allowed; use an escape such as \\t`
          : `non-ASCII character "${bad[0]}" is not supported: RE2 reads it as one UTF-8 character, nginx's PCRE as several bytes`,
    };
  } else {
    try {
      result = { ok: true, pcre: new Parser(pattern).run() };
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      result = { ok: false, by: e.by, reason: e.by === 're2' ? `invalid RE2 syntax: ${e.message}` : e.message };
    }
  }
  if (cache.size > 20000) cache.clear();
  cache.set(pattern, result);
  return result;
}

const unanchoredCache = new Map<string, string | null>();

/**
 * A checked pattern's PCRE form (checkRegex's `pcre`) for matching text that starts after other
 * text in the subject (a field of a composite: model/matching.ts) with the same meaning as at
 * the subject's start: its leading `^` or `\A` dropped, as the caller anchors it there; undefined
 * when it asserts the start elsewhere (`a|^b`, `(x^)`), which only the subject's start satisfies.
 * RE2's other assertions read the same after a newline: `\b` and `\B` see a non-word character
 * as at the start, and the form never looks behind (RE2 has no lookbehind).
 */
export function unanchoredPcre(pcre: string): string | undefined {
  let out = unanchoredCache.get(pcre);
  if (out === undefined) {
    out = null;
    const parser = new Parser(pcre);
    try {
      // The PCRE form parses as itself (the checks are RE2's; the rewrites are idempotent): a
      // pattern that does not is left alone.
      if (parser.run() === pcre) {
        const starts = parser.starts;
        if (starts.length === 0) out = pcre;
        else if (starts.length === 1 && starts[0] === 0) out = pcre.slice(pcre.charCodeAt(0) === 94 ? 1 : 2);
      }
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
    }
    if (unanchoredCache.size > 20000) unanchoredCache.clear();
    unanchoredCache.set(pcre, out);
  }
  return out ?? undefined;
}

/**
 * Check a RegularExpression value. On success `pcre` is the form to give nginx (same meaning
 * under PCRE2 as `pattern` under RE2); on failure `reason` says why, for the route's status.
 */
export function checkRegex(pattern: string): RegexCheck {
  const v = regexVerdict(pattern);
  return v.ok ? v : { ok: false, reason: v.reason };
}
