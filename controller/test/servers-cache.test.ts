import Handlebars from 'handlebars';
import { standardPipeline } from '../src/reconcile';
import { targetsFromGraph } from '../src/policies';
import { DEFAULT_CONTROLLER_NAME } from '../src/graph/types';
import { renderConfig, renderContext } from '../src/render';
import { templates } from '../src/render/templates';
import { planServers, ServersRenderer } from '../src/render/servers-cache';
import { baseDocs, policyDocs, routeDoc } from '../../scripts/bench-manifests';

function model(routes: number, options: { changed?: Map<number, string>; skip?: number; policies?: boolean } = {}) {
  const docs = [
    ...baseDocs(8080, 9000),
    ...Array.from({ length: routes }, (_, i) => i)
      .filter((i) => i !== options.skip)
      .map((i) => routeDoc(i, options.changed?.get(i), 3)),
    ...(options.policies ? policyDocs(routes) : []),
  ].map((doc, i) => ({ source: `m.yaml:${i}`, doc }));
  const parsed = standardPipeline.parseManifests(docs);
  const graph = standardPipeline.buildGraph(parsed.set, { controllerName: DEFAULT_CONTROLLER_NAME });
  const pp = standardPipeline.parsePolicyDocs!(docs);
  const pol = standardPipeline.computePolicies!({ policies: pp.policies, invalid: pp.invalid, targets: targetsFromGraph(graph) });
  return standardPipeline.buildModel(graph, pol.effective);
}

describe('servers.conf rendered per server', () => {
  test('a run of reconciles renders what the whole template renders, change after change', () => {
    const opts = { listenAddress: '127.0.0.1', prefix: '/tmp/servers-cache-test' };
    const steps = [
      { model: model(120), opts },
      { model: model(120, { changed: new Map([[7, '/changed-7']]) }), opts },
      { model: model(120, { changed: new Map([[7, '/changed-7']]) }), opts },
      { model: model(120, { changed: new Map([[7, '/changed-7'], [50, '/x/y']]), skip: 3 }), opts },
      { model: model(120, { skip: 3 }), opts: { ...opts, listenAddress: '127.0.0.2' } },
      { model: model(40, { policies: true }), opts },
      { model: model(120), opts },
    ];
    const whole = templates()['servers.conf'];
    for (const [i, step] of steps.entries()) {
      const expected = whole(renderContext(step.model, step.opts));
      expect([i, renderConfig(step.model, step.opts).files['servers.conf'] === expected]).toEqual([i, true]);
    }
  });

  test('the templates split only when each server body depends on its server alone', () => {
    const each = (body: string, after = '') => `{{#each servers}}\n${body}\n{{/each}}\n${after}`;
    expect(planServers(each('server {{name}} {{@root.listenAddress}};'), {})).toEqual({ rootFields: ['listenAddress'] });
    expect(planServers(each('{{#each names}}{{this}}{{#unless @last}} {{/unless}}{{/each}}'), {})).toEqual({ rootFields: [] });
    expect(planServers(each('{{> p settings}}'), { p: '{{#if a}}{{q a}}{{/if}}' })).toEqual({ rootFields: [] });
    // Each of these reads something that differs between one server alone and the whole list.
    for (const [body, partials, after] of [
      ['{{@index}}', {}, ''],
      ['{{#if @last}}x{{/if}}', {}, ''],
      ['{{> p}}', { p: '{{@first}}' }, ''],
      ['{{../listenAddress}}', {}, ''],
      ['{{@root.servers.length}}', {}, ''],
      ['{{@root}}', {}, ''],
      ['{{lookup @root name}}', {}, ''],
      ['{{> missing}}', {}, ''],
      ['{{> (dynamic)}}', {}, ''],
      ['{{#each names as |n|}}{{n}}{{/each}}', {}, ''],
      ['x', {}, 'trailer'],
    ] as [string, Record<string, string>, string][]) {
      expect([body, after, planServers(each(body, after), partials)]).toEqual([body, after, undefined]);
    }
    expect(planServers('{{#each servers}}x{{else}}none{{/each}}', {})).toBeUndefined();
    expect(planServers('# head\n{{#each servers}}x{{/each}}', {})).toBeUndefined();
  });

  test('a template that does not split is rendered whole every time', () => {
    const source = '{{#each servers}}{{@index}}:{{name}};{{/each}}';
    const renderer = new ServersRenderer(Handlebars.compile(source), () => planServers(source, {}));
    const context = { servers: [{ name: 'a' }, { name: 'b' }] };
    for (let k = 0; k < 3; k++) expect(renderer.render(context)).toBe('0:a;1:b;');
  });
});
