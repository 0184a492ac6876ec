/**
 * Globs as Gitea writes them (webhook branch filters, the unadopted-repository query), matched
 * in time linear in the text: the pattern becomes a small automaton whose states are followed
 * all at once (Thompson's construction), never a backtracking regular expression. Gitea gets
 * the same guarantee from Go's RE2-style regexp; a JavaScript RegExp built from a user's
 * pattern (`*a*a*a*a*...b`) can instead run for minutes and stall the whole event loop.
 *
 * Syntax (Gitea's modules/glob, no separators): `*` any run of characters (`**` the same),
 * `?` one character, `[abc]` `[a-z]` a class (`[!...]` or `[^...]` negated), `{a,b}`
 * alternatives (nestable), `\x` the character x. Everything else stands for itself.
 * With separators (Gitea compiles branch protection rules with '/'), `*` and `?` do not cross a
 * separator and `**` does, as in gobwas/glob which Gitea uses.
 */

export class GlobSyntaxError extends Error {}

/** One automaton state: consume a character that passes `test`, or split without consuming. */
type State =
  | { kind: 'char'; test: (cp: number) => boolean; next: number }
  | { kind: 'split'; next: number[] }
  | { kind: 'match' };

interface Fragment {
  start: number;
  /** States whose `next` is still to be patched to what follows the fragment. */
  ends: number[];
}

/** A compiled glob; `match` runs in O(text length × pattern length). */
export interface Glob {
  readonly source: string;
  match(text: string): boolean;
}

class Builder {
  readonly states: State[] = [];
  private readonly cps: number[];
  private pos = 0;
  /** What `*` and `?` may consume: anything, or anything but a separator. */
  private readonly single: (cp: number) => boolean;

  constructor(pattern: string, separators: readonly number[] = []) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0) as number);
    this.single = separators.length ? (cp) => !separators.includes(cp) : () => true;
  }

  private add(state: State): number {
    this.states.push(state);
    return this.states.length - 1;
  }

  private patch(ends: number[], to: number): void {
    for (const i of ends) {
      const s = this.states[i];
      if (s.kind === 'char') s.next = to;
      else if (s.kind === 'split') s.next.push(to);
    }
  }

  /** An empty fragment (matches the empty string): a split with no way out yet. */
  private empty(): Fragment {
    const i = this.add({ kind: 'split', next: [] });
    return { start: i, ends: [i] };
  }

  private char(test: (cp: number) => boolean): Fragment {
    const i = this.add({ kind: 'char', test, next: -1 });
    return { start: i, ends: [i] };
  }

  private concat(a: Fragment, b: Fragment): Fragment {
    this.patch(a.ends, b.start);
    return { start: a.start, ends: b.ends };
  }

  /** Any run of characters (`**`: separators included): a split that takes one more character or leaves. */
  private star(crossSeparators: boolean): Fragment {
    const loop = this.add({ kind: 'split', next: [] });
    const any = this.add({ kind: 'char', test: crossSeparators ? () => true : this.single, next: loop });
    (this.states[loop] as { next: number[] }).next.push(any);
    return { start: loop, ends: [loop] };
  }

  private classAt(): (cp: number) => boolean {
    const ranges: [number, number][] = [];
    let negate = false;
    if (this.cps[this.pos] === 0x21 /* ! */ || this.cps[this.pos] === 0x5e /* ^ */) {
      negate = true;
      this.pos++;
    }
    const read = (): number => {
      const c = this.cps[this.pos++];
      if (c !== 0x5c /* \ */) return c;
      if (this.pos >= this.cps.length) throw new GlobSyntaxError('unterminated character class escape');
      return this.cps[this.pos++];
    };
    let first = true;
    for (;;) {
      if (this.pos >= this.cps.length) throw new GlobSyntaxError('unterminated character class');
      if (this.cps[this.pos] === 0x5d /* ] */ && !first) {
        this.pos++;
        break;
      }
      if (this.cps[this.pos] === 0x5d && first) throw new GlobSyntaxError('empty character class');
      first = false;
      const lo = read();
      if (this.cps[this.pos] === 0x2d /* - */ && this.pos + 1 < this.cps.length && this.cps[this.pos + 1] !== 0x5d) {
        this.pos++;
        const hi = read();
        if (hi < lo) throw new GlobSyntaxError('invalid character class range');
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    return (cp) => ranges.some(([lo, hi]) => cp >= lo && cp <= hi) !== negate;
  }

  /** A sequence up to the end, or (inside braces) up to `,` or `}`. */
  sequence(inBraces: boolean): Fragment {
    let frag = this.empty();
    while (this.pos < this.cps.length) {
      const c = this.cps[this.pos];
      if (inBraces && (c === 0x2c /* , */ || c === 0x7d /* } */)) return frag;
      this.pos++;
      let next: Fragment;
      if (c === 0x2a /* * */) {
        let run = 1;
        while (this.cps[this.pos] === 0x2a) {
          this.pos++;
          run++;
        }
        next = this.star(run > 1);
      } else if (c === 0x3f /* ? */) next = this.char(this.single);
      else if (c === 0x5b /* [ */) next = this.char(this.classAt());
      else if (c === 0x7b /* { */) next = this.alternatives();
      else if (c === 0x5c /* \ */) {
        if (this.pos >= this.cps.length) throw new GlobSyntaxError('no character to escape');
        const lit = this.cps[this.pos++];
        next = this.char((cp) => cp === lit);
      } else next = this.char((cp) => cp === c);
      frag = this.concat(frag, next);
    }
    if (inBraces) throw new GlobSyntaxError('unterminated {');
    return frag;
  }

  /** `{a,b,...}` after its `{`: a split into each alternative, all joining after the `}`. */
  private alternatives(): Fragment {
    const split = this.add({ kind: 'split', next: [] });
    const ends: number[] = [];
    for (;;) {
      const alt = this.sequence(true);
      (this.states[split] as { next: number[] }).next.push(alt.start);
      ends.push(...alt.ends);
      const c = this.cps[this.pos++];
      if (c === 0x7d /* } */) break;
    }
    return { start: split, ends };
  }
}

/**
 * Compiles a glob; throws GlobSyntaxError for an unterminated class, brace or escape.
 * `separators` (e.g. '/') are characters `*` and `?` do not match.
 */
export function compileGlob(pattern: string, separators = ''): Glob {
  const b = new Builder(pattern, Array.from(separators, (c) => c.codePointAt(0) as number));
  const frag = b.sequence(false);
  const matchState = b.states.length;
  b.states.push({ kind: 'match' });
  for (const i of frag.ends) {
    const s = b.states[i];
    if (s.kind === 'char') s.next = matchState;
    else if (s.kind === 'split') s.next.push(matchState);
  }
  const states = b.states;
  const start = frag.start;

  // The state lists are reused arrays with a generation mark per state, so one step costs
  // O(states) without allocating: the whole match is O(text × states).
  const n = states.length;
  const seen = new Int32Array(n).fill(-1);
  let current = new Int32Array(n);
  let next = new Int32Array(n);
  // A state may be pushed once per edge into it before it is marked.
  const stack = new Int32Array(n + states.reduce((sum, s) => sum + (s.kind === 'split' ? s.next.length : 0), 0));

  /** Adds a state and everything reachable from it without consuming input. */
  function close(list: Int32Array, size: number, from: number, gen: number): number {
    let top = 0;
    stack[top++] = from;
    while (top) {
      const i = stack[--top];
      if (seen[i] === gen) continue;
      seen[i] = gen;
      list[size++] = i;
      const s = states[i];
      if (s.kind === 'split') for (const t of s.next) if (seen[t] !== gen) stack[top++] = t;
    }
    return size;
  }

  return {
    source: pattern,
    match(text: string): boolean {
      let gen = 0;
      seen.fill(-1);
      let size = close(current, 0, start, gen);
      for (const ch of text) {
        const cp = ch.codePointAt(0) as number;
        gen++;
        let nextSize = 0;
        for (let k = 0; k < size; k++) {
          const s = states[current[k]];
          if (s.kind === 'char' && s.test(cp)) nextSize = close(next, nextSize, s.next, gen);
        }
        if (!nextSize) return false;
        [current, next] = [next, current];
        size = nextSize;
      }
      return seen[matchState] === gen;
    },
  };
}

/** A syntax check for input validation: the message, or null when the glob is valid. */
export function globError(pattern: string, separators = ''): string | null {
  try {
    compileGlob(pattern, separators);
    return null;
  } catch (err) {
    if (err instanceof GlobSyntaxError) return err.message;
    throw err;
  }
}
