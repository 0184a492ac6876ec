import { parseLoad } from '../src/inference/picker/metrics';
import { rank, score, steered } from '../src/inference/picker/choose';
import { BuiltinPicker } from '../src/inference/picker/builtin';
import { startModelServer, type ModelServer } from '../../e2e/support/model-server';
import { destinationList } from '../src/inference/picker-client';
import { parseInferencePoolValue, inferencePoolValue } from '../src/model/inference';

describe('built-in picker: reading vLLM metrics', () => {
  test('waiting, running and KV-cache usage are summed over the label sets of each family; comments are skipped', () => {
    const text = [
      '# HELP vllm:num_requests_waiting Number of requests waiting.',
      '# TYPE vllm:num_requests_waiting gauge',
      'vllm:num_requests_waiting{model_name="a"} 3',
      'vllm:num_requests_waiting{model_name="b"} 2',
      'vllm:num_requests_running{model_name="a"} 4.0',
      'vllm:kv_cache_usage_perc{model_name="a"} 0.75',
      'vllm:unrelated 99',
    ].join('\n');
    expect(parseLoad(text, 1)).toEqual({ waiting: 5, running: 4, kvCache: 0.75, at: 1 });
  });

  test('older vLLM (gpu_cache_usage_perc) and SGLang names are read; text without any known family is no load', () => {
    expect(parseLoad('vllm:gpu_cache_usage_perc 0.5\n', 2)).toEqual({ waiting: 0, running: 0, kvCache: 0.5, at: 2 });
    expect(parseLoad('sglang:num_queue_reqs 7\nsglang:num_running_reqs 1\nsglang:token_usage 0.2\n', 3)).toEqual({ waiting: 7, running: 1, kvCache: 0.2, at: 3 });
    expect(parseLoad('http_requests_total 10\n')).toBeUndefined();
  });
});

describe('built-in picker: choosing', () => {
  const idle = { waiting: 0, running: 1, kvCache: 0.1, at: 1 };
  const busy = { waiting: 8, running: 4, kvCache: 0.9, at: 1 };

  test('the least loaded endpoint ranks first; a queue outweighs running requests', () => {
    const loads: Record<string, typeof idle> = { 'a:1': busy, 'b:1': idle };
    expect(rank(['a:1', 'b:1'], (e) => loads[e], () => 0)[0]).toBe('b:1');
    expect(score({ waiting: 1, running: 0, kvCache: 0, at: 0 }, 0)).toBeGreaterThan(score({ waiting: 0, running: 3, kvCache: 0, at: 0 }, 0));
  });

  test('requests sent since the last scrape and still in flight count as waiting, so a burst spreads', () => {
    const loads: Record<string, typeof idle> = { 'a:1': idle, 'b:1': { ...idle, waiting: 1 } };
    expect(rank(['a:1', 'b:1'], (e) => loads[e], (e) => (e === 'a:1' ? 3 : 0))[0]).toBe('b:1');
  });

  test('requests that ended since the scrape shorten the queue it showed (then the running count), never below zero', () => {
    const load = { waiting: 3, running: 2, kvCache: 0, at: 0 };
    expect(score(load, -2)).toBe(score({ ...load, waiting: 1 }, 0));
    expect(score(load, -4)).toBe(score({ ...load, waiting: 0, running: 1 }, 0));
    expect(score(load, -50)).toBe(score({ ...load, waiting: 0, running: 0 }, 0));
    expect(score(undefined, -3)).toBe(score(undefined, 0));
  });

  test('test-epp-endpoint-selection keeps the named endpoints (ip or ip:port) in the order given', () => {
    const all = ['10.0.0.1:8000', '10.0.0.1:8001', '10.0.0.2:8000', '10.0.0.3:8000'];
    expect(steered(all, undefined)).toBeUndefined();
    expect(steered(all, '10.0.0.3, 10.0.0.1:8001')).toEqual(['10.0.0.3:8000', '10.0.0.1:8001']);
    expect(steered(all, '10.0.0.1')).toEqual(['10.0.0.1:8000', '10.0.0.1:8001']);
    expect(steered(all, '10.9.9.9')).toEqual([]);
  });

  test('the picker answers the best endpoint and two fallbacks, or 503 when nothing is eligible', () => {
    const picker = new BuiltinPicker({ intervalMs: 60_000 });
    try {
      // Loopback addresses: the picker scrapes what it is given (nothing listens on port 1).
      const d = picker.pick('ns/p', ['127.0.0.201:1', '127.0.0.202:1', '127.0.0.203:1', '127.0.0.204:1'], {});
      expect(d.kind === 'endpoints' && d.endpoints.length).toBe(3);
      expect(picker.pick('ns/p', ['127.0.0.201:1'], { 'test-epp-endpoint-selection': '127.0.0.209' })).toMatchObject({ kind: 'reject', status: 503 });
      expect(picker.pick('ns/empty', [], {})).toMatchObject({ kind: 'reject', status: 503 });
    } finally {
      picker.close();
    }
  });
});

describe('built-in picker: requests in flight, against real model servers', () => {
  let servers: ModelServer[] = [];
  let picker: BuiltinPicker | undefined;

  afterEach(async () => {
    picker?.close();
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  /** A picker over two fake vLLM servers whose first scrape is in (no further scrape: one a minute). */
  async function twoPods(): Promise<{ p: BuiltinPicker; a: string; b: string }> {
    servers = [await startModelServer('a', { address: '127.0.0.211', slots: 2 }), await startModelServer('b', { address: '127.0.0.212', slots: 2 })];
    return { p: (picker = new BuiltinPicker({ intervalMs: 60_000 })), a: servers[0].endpoint, b: servers[1].endpoint };
  }

  async function scraped(p: BuiltinPicker, endpoints: string[]): Promise<void> {
    // The first pick creates the pool and starts its scrapes; its request ends at once (before
    // the scrapes come in: nothing is in flight when they do).
    const first = p.pick('ns/p', endpoints, { 'test-epp-endpoint-selection': endpoints[0] });
    if (first.kind === 'endpoints') first.release();
    while (!p.view('ns/p').every((e) => e.load)) await new Promise((r) => setTimeout(r, 10));
  }

  test('a pod with requests in flight gets fewer new ones; once they end it gets them again', async () => {
    const { p, a, b } = await twoPods();
    await scraped(p, [a, b]);
    // Two idle pods: requests held in flight alternate between them.
    const held = Array.from({ length: 6 }, () => p.pick('ns/p', [a, b], {})).map((d) => {
      if (d.kind !== 'endpoints') throw new Error('rejected');
      return d;
    });
    const to = (ep: string) => held.filter((d) => d.endpoints[0] === ep);
    expect([to(a).length, to(b).length]).toEqual([3, 3]);
    expect(p.view('ns/p').map((e) => e.inFlight)).toEqual([3, 3]);
    for (const d of to(b)) d.release();
    const next = p.pick('ns/p', [a, b], {});
    expect(next.kind === 'endpoints' && next.endpoints[0]).toBe(b);
  });

  test('a quick idle pod keeps getting a steady stream of requests while a pod with a deep queue gets none', async () => {
    const { p, a, b } = await twoPods();
    servers[1].load = { waiting: 10, running: 4, kvCache: 0.8 };
    await scraped(p, [a, b]);
    // Many more requests than the busy pod's queue between two scrapes, each ended before the
    // next: ended requests are no load, so the busy pod never looks the better choice.
    const chosen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const d = p.pick('ns/p', [a, b], {});
      if (d.kind !== 'endpoints') throw new Error('rejected');
      chosen.add(d.endpoints[0]);
      d.release();
    }
    expect([...chosen]).toEqual([a]);
  });
});

describe('the hop protocol', () => {
  test('a pool description survives the header round trip; junk is refused', () => {
    const value = inferencePoolValue({ pool: 'ns/p', picker: { kind: 'service', service: 'ns/epp:9002', addresses: ['10.0.0.9:9002', '10.0.0.10:9002'] }, failureMode: 'FailOpen', endpoints: ['10.0.0.1:8000'], appProtocol: 'kubernetes.io/h2c' });
    expect(parseInferencePoolValue(value)).toEqual({ pool: 'ns/p', failureMode: 'FailOpen', picker: ['10.0.0.9:9002', '10.0.0.10:9002'], endpoints: ['10.0.0.1:8000'], h2c: true });
    expect(parseInferencePoolValue('pool=ns/p;mode=Maybe;picker=builtin')).toBeUndefined();
    expect(parseInferencePoolValue('garbage')).toBeUndefined();
  });

  test('the destination header is an ordered list: primary first, spaces tolerated', () => {
    expect(destinationList('10.0.0.1:8000, 10.0.0.2:8000,,')).toEqual(['10.0.0.1:8000', '10.0.0.2:8000']);
  });
});
