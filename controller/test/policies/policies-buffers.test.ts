import { checkProxySettings, computePolicies, locationPolicies, type LocationProxySettings } from '../../src/policies';
import { accepted, gateway, gwRef, proxy, rateLimit, route, routeRef, rules } from './helpers';
import { nginxTest } from './nginx-check';

function directives(s: LocationProxySettings): string {
  const lines: string[] = [];
  if (s.buffering !== undefined) lines.push(`proxy_buffering ${s.buffering ? 'on' : 'off'};`);
  if (s.bufferSize) lines.push(`proxy_buffer_size ${s.bufferSize};`);
  if (s.buffers) lines.push(`proxy_buffers ${s.buffers.number} ${s.buffers.size};`);
  if (s.busyBuffersSize) lines.push(`proxy_busy_buffers_size ${s.busyBuffersSize};`);
  return lines.join('\n');
}

/** Merged settings a Gateway + route pair can produce, including the ones nginx refuses. */
const CASES: LocationProxySettings[] = [
  {},
  { bufferSize: '8k' },
  { bufferSize: '16k' }, // default busy = 32k > 7 x 4k
  { bufferSize: '14k' },
  { bufferSize: '16k', buffering: false },
  { busyBuffersSize: '16k', buffers: { number: 2, size: '4k' } }, // the notes' cross-level example
  { busyBuffersSize: '4k', buffers: { number: 2, size: '4k' } },
  { busyBuffersSize: '4k' },
  { busyBuffersSize: '3k' },
  { busyBuffersSize: '28k' },
  { busyBuffersSize: '29k' },
  { bufferSize: '8k', busyBuffersSize: '8k' },
  { bufferSize: '8k', busyBuffersSize: '7k' },
  { buffers: { number: 8, size: '16k' } },
  { buffers: { number: 8, size: '16k' }, busyBuffersSize: '8k' },
  { buffers: { number: 2, size: '1m' }, bufferSize: '1m' },
  { buffers: { number: 2, size: '1m' }, bufferSize: '2m' },
  { buffers: { number: 4, size: '8k' }, bufferSize: '4096', busyBuffersSize: '16383' },
  { buffers: { number: 3, size: '4k' }, bufferSize: '8k', busyBuffersSize: '8192' },
  { buffers: { number: 3, size: '4k' }, bufferSize: '8k', busyBuffersSize: '8193' },
  { buffers: { number: 4, size: '1000m' }, bufferSize: '1024m', busyBuffersSize: '2000m' },
  { buffers: { number: 4, size: '1000m' }, bufferSize: '2000m', busyBuffersSize: '2000m' }, // above proxy_max_temp_file_size
];

describe('busy-buffer bounds after merging, as nginx checks them', () => {
  it.each(CASES.map((c) => [JSON.stringify(c), c] as const))('%s: our check agrees with nginx -t', (_n, settings) => {
    const nginx = nginxTest('', directives(settings));
    const problem = checkProxySettings(settings);
    expect({ refused: problem !== undefined }).toEqual({ refused: !nginx.ok });
    if (!nginx.ok) expect(nginx.output).toMatch(/"proxy_(busy_buffers_size|max_temp_file_size)" must/);
  });

  it('every fix the message proposes is accepted by nginx', () => {
    // "set busyBuffersSize between A and B": both ends must load.
    const s = { busyBuffersSize: '32k', buffers: { number: 4, size: '4k' } };
    const fix = checkProxySettings(s)!.fix;
    const [, low, high] = fix.match(/between (\d+)k .* and (\d+)k/)!;
    for (const busy of [low, high]) expect(nginxTest('', directives({ ...s, busyBuffersSize: `${busy}k` })).ok).toBe(true);
  });
});

const at = (effective: ReturnType<typeof computePolicies>['effective'], r = 'r') =>
  locationPolicies(effective, { namespace: 'default', name: 'gw' }, { namespace: 'default', name: r });

describe('a merged busy-buffer violation never reaches nginx', () => {
  const gwPolicy = () => proxy('gw-buffers', [gwRef()], { busyBuffersSize: '16k' });
  const routePolicy = () => proxy('small-buffers', [routeRef()], { buffers: { number: 2, size: '4k' } });

  it('first time: the route keeps the Gateway settings; the route policy says what is wrong and how to fix it', () => {
    const result = computePolicies({ policies: [gwPolicy(), routePolicy()], targets: [gateway(), route()] });
    const cond = accepted(result.statuses, 'small-buffers', 'r');
    expect(cond).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(cond.message).toContain('busyBuffersSize must not exceed the size of all buffers minus one buffer (4k');
    expect(cond.message).toContain('busyBuffersSize from ProxySettingsPolicy default/gw-buffers on Gateway default/gw');
    expect(cond.message).toContain('buffers from ProxySettingsPolicy default/small-buffers on HTTPRoute default/r');
    expect(cond.message).toContain('Fix: set busyBuffersSize to 4k (4096 bytes), or raise buffers.number.');
    expect(accepted(result.statuses, 'gw-buffers', 'gw')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(at(result.effective).proxy).toEqual({ busyBuffersSize: '16k' });
    expect(nginxTest('', directives(at(result.effective).proxy!)).ok).toBe(true);
  });

  it('later: the location keeps its last valid settings while unrelated changes flow', () => {
    const before = computePolicies({
      policies: [gwPolicy(), proxy('small-buffers', [routeRef()], { buffers: { number: 8, size: '4k' } })],
      targets: [gateway(), route(), route('other')],
    });
    expect(at(before.effective).proxy).toEqual({ busyBuffersSize: '16k', buffers: { number: 8, size: '4k' } });
    const after = computePolicies({
      policies: [gwPolicy(), routePolicy(), rateLimit('new-limit', [routeRef('other')], rules({}))],
      targets: [gateway(), route(), route('other')],
      previous: before.effective,
    });
    expect(at(after.effective).proxy).toEqual({ busyBuffersSize: '16k', buffers: { number: 8, size: '4k' } });
    expect(accepted(after.statuses, 'small-buffers', 'r').message).toContain('keeps its previous proxy buffering settings');
    expect(at(after.effective, 'other').rateLimit!.limits).toEqual([{ zone: 'default_rl_new-limit_rule0' }]);
  });

  it('one policy that breaks nginx only through its defaults (bufferSize 16k) is caught too', () => {
    const result = computePolicies({ policies: [proxy('big-header', [gwRef()], { bufferSize: '16k' })], targets: [gateway(), route()] });
    const cond = accepted(result.statuses, 'big-header', 'gw');
    expect(cond).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(cond.message).toContain('busyBuffersSize 32k (32768 bytes) (nginx default');
    expect(result.effective.gateways['default/gw']).toBeUndefined();
    // Fixing it as the message says makes it valid.
    const fixed = computePolicies({ policies: [proxy('big-header', [gwRef()], { bufferSize: '16k', busyBuffersSize: '20k' })], targets: [gateway()] });
    expect(accepted(fixed.statuses, 'big-header', 'gw').reason).toBe('Accepted');
  });
});
