/**
 * The handlebars environment: templates/*.hbs, compiled once, with helpers that only format
 * values (quote, integer, on/off...). Decisions are made in model/, never in a template.
 */
import * as fs from 'fs';
import * as path from 'path';
import Handlebars from 'handlebars';
import { comment, complexValue, hostPort, ident, ifOperator, integer, onOff, quote } from './format';
import { planServers, ServersRenderer } from './servers-cache';
import { eachLocation } from './location-cache';
import type { RuleLocation } from '../model/types';

export const TEMPLATES_DIR = path.resolve(__dirname, '..', '..', '..', 'templates');

export type Template = (context: unknown) => string;

let compiled: Record<string, Template> | undefined;
let servers: ServersRenderer | undefined;

function partialOptions() {
  const helpers = ['q', 'kv', 'concat', 'int', 'onoff', 'comment', 'ident', 'hostport', 'isSet', 'locationModifier', 'percent', 'hasAny', 'cv', 'ifop'];
  return { noEscape: true, knownHelpers: Object.fromEntries(helpers.map((h) => [h, true])), knownHelpersOnly: true };
}

/** A file of templates/. */
export function readTemplate(name: string): string {
  return fs.readFileSync(path.join(TEMPLATES_DIR, name), 'utf8');
}

let environment: ((source: string) => Template) | undefined;

/** Compiles `source` with the helpers and partials of templates/ (templates() uses it; tests too). */
export function compileTemplate(source: string): Template {
  if (environment) return environment(source);
  const hb = Handlebars.create();
  hb.registerHelper('q', (v: string | number) => quote(v));
  hb.registerHelper('kv', (k: string, v: string | number) => quote(`${k}=${v}`));
  hb.registerHelper('concat', (...args: unknown[]) => args.slice(0, -1).join(''));
  hb.registerHelper('int', (v: unknown) => integer(v));
  hb.registerHelper('onoff', (v: unknown) => onOff(v));
  hb.registerHelper('comment', (v: string) => comment(v));
  hb.registerHelper('ident', (v: string) => ident(v));
  hb.registerHelper('hostport', (a: string, p: number) => hostPort(a, p));
  hb.registerHelper('isSet', (v: unknown) => v !== undefined && v !== null);
  hb.registerHelper('hasAny', (o: Record<string, unknown> | undefined) => !!o && Object.values(o).some((v) => v !== undefined));
  hb.registerHelper('locationModifier', (m: string) => (m === 'exact' ? '= ' : ''));
  hb.registerHelper('percent', (p: string) => {
    if (p === '*') return '*';
    if (!/^\d{1,3}(\.\d{1,2})?$/.test(p)) throw new Error(`bad split_clients percentage ${JSON.stringify(p)}`);
    return `${p}%`;
  });
  hb.registerHelper('cv', (parts: unknown) => complexValue(parts));
  hb.registerHelper('ifop', (op: string) => ifOperator(op));
  // A server's locations, each one's kept text when it did not change (location-cache.ts).
  hb.registerHelper('eachLocation', eachLocation);
  // The rule locations that render anything (servers.conf.hbs: a shared named location or a
  // mirror's location); one host's ~3,000 rules would otherwise each cost a loop iteration.
  hb.registerHelper('emittedRules', emittedRules);
  for (const partial of ['settings', 'proxy', 'filters', 'upstreamtls']) hb.registerPartial(partial, hb.compile(readTemplate(`${partial}.hbs`), partialOptions()));
  // Known helpers are called directly by the compiled templates (no lookup per call).
  const helpers = ['q', 'kv', 'concat', 'int', 'onoff', 'comment', 'ident', 'hostport', 'isSet', 'locationModifier', 'percent', 'hasAny', 'cv', 'ifop', 'eachLocation', 'emittedRules'];
  const options = {
    noEscape: true,
    strict: false,
    preventIndent: false,
    knownHelpers: Object.fromEntries(helpers.map((h) => [h, true])),
    knownHelpersOnly: true,
  };
  environment = (text) => hb.compile(text, options) as Template;
  return environment(source);
}

export function templates(): Record<string, Template> {
  if (compiled) return compiled;
  compiled = {};
  for (const name of ['nginx.conf', 'maps.conf', 'upstreams.conf', 'servers.conf', 'stream.conf', 'generation.conf']) compiled[name] = compileTemplate(readTemplate(`${name}.hbs`));
  return compiled;
}

/** The rule locations servers.conf.hbs writes something for: emitted ones and those with mirrors or an authorization location. */
export function emittedRules(rules: RuleLocation[] | undefined): RuleLocation[] {
  const out: RuleLocation[] = [];
  for (const r of rules ?? []) if (r.emit || r.filters?.mirrors?.length || r.filters?.externalAuth) out.push(r);
  return out;
}

/** servers.conf, rendered per server with the text of unchanged servers reused (servers-cache.ts). */
export function serversRenderer(): ServersRenderer {
  if (servers) return servers;
  servers = new ServersRenderer(templates()['servers.conf'], () =>
    planServers(readTemplate('servers.conf.hbs'), Object.fromEntries(['settings', 'proxy', 'filters', 'upstreamtls'].map((p) => [p, readTemplate(`${p}.hbs`)]))),
  );
  return servers;
}
