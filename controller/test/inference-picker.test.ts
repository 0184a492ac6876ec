import { parseLoad } from '../src/inference/picker/metrics';
import { rank, score, steered } from '../src/inference/picker/choose';
import { BuiltinPicker } from '../src/inference/picker/builtin';
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

  test('requests sent since the last scrape count as waiting, so a burst spreads', () => {
    const loads: Record<string, typeof idle> = { 'a:1': idle, 'b:1': { ...idle, waiting: 1 } };
    expect(rank(['a:1', 'b:1'], (e) => loads[e], (e) => (e === 'a:1' ? 3 : 0))[0]).toBe('b:1');
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
