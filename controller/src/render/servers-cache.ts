/**
 * servers.conf one server at a time, reusing the text of servers whose model did not change.
 *
 * servers.conf is nearly all of the config (1,000 routes: 930 of 960 KB) and a one-route change
 * touches one server of ~20, but rendering it whole costs ~12 ms. When the template is a plain
 * `{{#each servers}}...{{/each}}` whose body depends on nothing but its server and a few @root
 * values (checked on the template's syntax tree, partials included: no @index/@first/@last/@key
 * of that loop, no `../`, no dynamic partials or lookups), its output is the concatenation of
 * each server's body, so a server's text can be kept under the JSON of its model. Any template
 * that does not pass the check is rendered whole, as before; so is the first render (a cold
 * start pays nothing for the cache).
 */
import Handlebars from 'handlebars';
import type { Template } from './templates';

type Node = { type: string; [k: string]: unknown };

export interface ServersPlan {
  /** Top-level context fields the loop body reads through @root. */
  rootFields: string[];
}

/**
 * The plan for `source` (servers.conf) and its `partials`, or undefined when the body may
 * depend on more than its server (then only a whole render is right).
 */
export function planServers(source: string, partials: Record<string, string>): ServersPlan | undefined {
  const program = Handlebars.parse(source) as unknown as { body: Node[] };
  let loop: Node | undefined;
  for (const s of program.body) {
    // Text outside the loop (after standalone lines are stripped) would be written once, not per server.
    if (s.type === 'ContentStatement' && s.value === '') continue;
    if (s.type === 'CommentStatement') continue;
    if (s.type === 'BlockStatement' && !loop && isEachServers(s)) {
      loop = s;
      continue;
    }
    return undefined;
  }
  if (!loop) return undefined;
  const rootFields = new Set<string>();
  const parsedPartials = new Map<string, Node>();
  const partial = (name: string): Node | undefined => {
    if (!(name in partials)) return undefined;
    if (!parsedPartials.has(name)) parsedPartials.set(name, Handlebars.parse(partials[name]) as unknown as Node);
    return parsedPartials.get(name);
  };
  const ok = walk(loop.program as Node, 0, { rootFields, partial, active: new Set() });
  return ok ? { rootFields: [...rootFields].sort() } : undefined;
}

function isEachServers(s: Node): boolean {
  const path = s.path as Node;
  const params = s.params as Node[];
  const hash = s.hash as { pairs: unknown[] } | undefined;
  return (
    path.type === 'PathExpression' &&
    path.original === 'each' &&
    params.length === 1 &&
    params[0].type === 'PathExpression' &&
    params[0].original === 'servers' &&
    (hash === undefined || hash.pairs.length === 0) &&
    !s.inverse &&
    !(s.program as { blockParams?: unknown[] }).blockParams?.length
  );
}

interface Walk {
  rootFields: Set<string>;
  partial: (name: string) => Node | undefined;
  /** Partials being walked (a partial that includes itself is not followed twice). */
  active: Set<string>;
}

/** Loop data of the servers loop itself (depth `loops` === 0) would differ per server. */
const LOOP_DATA = new Set(['index', 'first', 'last', 'key']);

/** True when everything under `node` reads only its own context, nested loops' data and @root fields. */
function walk(node: unknown, loops: number, w: Walk): boolean {
  if (Array.isArray(node)) return node.every((n) => walk(n, loops, w));
  if (typeof node !== 'object' || node === null) return true;
  const n = node as Node;
  switch (n.type) {
    case 'Program':
      return walk(n.body, loops, w);
    case 'ContentStatement':
    case 'CommentStatement':
    case 'StringLiteral':
    case 'NumberLiteral':
    case 'BooleanLiteral':
    case 'UndefinedLiteral':
    case 'NullLiteral':
      return true;
    case 'PathExpression': {
      const parts = n.parts as string[];
      if (n.data) {
        if (n.depth !== 0) return false;
        if (parts[0] === 'root') {
          // One server alone is rendered with a list of one: @root.servers would differ.
          if (parts.length < 2 || parts[1] === 'servers') return false;
          w.rootFields.add(parts[1]);
          return true;
        }
        return loops > 0 && parts.length === 1 && LOOP_DATA.has(parts[0]);
      }
      // `../` reads an outer context; `lookup` reads a computed one.
      return n.depth === 0 && n.original !== 'lookup';
    }
    case 'SubExpression':
    case 'MustacheStatement':
      return walk(n.path, loops, w) && walk(n.params, loops, w) && walk(n.hash, loops, w);
    case 'Hash':
      return walk(n.pairs, loops, w);
    case 'HashPair':
      return walk(n.value, loops, w);
    case 'BlockStatement': {
      const nested = (n.path as Node).type === 'PathExpression' && (n.path as Node).original === 'each' ? loops + 1 : loops;
      if ((n.program as { blockParams?: unknown[] } | undefined)?.blockParams?.length) return false;
      return walk(n.path, loops, w) && walk(n.params, loops, w) && walk(n.hash, loops, w) && walk(n.program, nested, w) && walk(n.inverse, loops, w);
    }
    case 'PartialStatement': {
      const name = n.name as Node;
      if (name.type !== 'PathExpression' || name.data) return false;
      const key = String(name.original);
      const body = w.partial(key);
      if (!body) return false;
      if (!walk(n.params, loops, w) || !walk(n.hash, loops, w)) return false;
      if (w.active.has(key)) return true;
      w.active.add(key);
      const ok = walk(body, loops, w);
      w.active.delete(key);
      return ok;
    }
    default:
      // Partial blocks, decorators, anything newer: not analysed, so not split.
      return false;
  }
}

interface Cache {
  rootKey: string;
  /** Server model JSON -> its text, from the last render (older entries are dropped). */
  texts: Map<string, string>;
}

/**
 * Renders servers.conf with `template` for `context` (whose `servers` is the model's list),
 * splitting per server when `plan` allows and a previous render primed the cache.
 */
export class ServersRenderer {
  private cache?: Cache;
  private renders = 0;
  private plan?: ServersPlan | null;

  /** `plan` is asked for on the second render (a cold start pays neither the analysis nor the cache). */
  constructor(
    private readonly template: Template,
    private readonly planFor: () => ServersPlan | undefined,
  ) {}

  render(context: Record<string, unknown> & { servers: unknown[] }): string {
    // The first render (a cold start) is a whole one: the cache would cost it ~30%.
    if (this.renders++ === 0) return this.template(context);
    if (this.plan === undefined) this.plan = this.planFor() ?? null;
    // One server (every route on one hostless listener): a change always changes it, and its
    // key (the JSON of ~1,000 routes' locations, ~8 MB) would cost as much as its render.
    if (!this.plan || context.servers.length < 2) {
      this.cache = undefined;
      return this.template(context);
    }
    const rootKey = JSON.stringify(this.plan.rootFields.map((f) => context[f]));
    const previous = this.cache?.rootKey === rootKey ? this.cache.texts : new Map<string, string>();
    const texts = new Map<string, string>();
    let out = '';
    for (const server of context.servers) {
      const key = JSON.stringify(server);
      let text = texts.get(key) ?? previous.get(key);
      if (text === undefined) text = this.template({ ...context, servers: [server] });
      texts.set(key, text);
      out += text;
    }
    this.cache = { rootKey, texts };
    return out;
  }
}
