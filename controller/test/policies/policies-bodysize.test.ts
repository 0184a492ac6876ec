import { contentLengthAbove } from '../../src/policies';

describe('contentLengthAbove: a regex for Content-Length values over a limit', () => {
  const limits = [0, 1, 9, 10, 99, 100, 1000, 1024, 1099, 4095, 65536, 999999, 1048576, 10485760, 9007199254740];
  it.each(limits)('limit %d', (limit) => {
    const re = new RegExp(contentLengthAbove(limit));
    const probes = new Set<bigint>();
    for (const delta of [-1001n, -101n, -11n, -10n, -2n, -1n, 0n, 1n, 2n, 9n, 10n, 11n, 100n, 1000n, 123456n]) {
      const v = BigInt(limit) + delta;
      if (v >= 0n) probes.add(v);
    }
    for (const p of [0n, 1n, 10n ** 20n]) probes.add(p);
    for (const v of probes) {
      for (const text of [v.toString(), `00${v.toString()}`]) {
        expect({ text, over: re.test(text) }).toEqual({ text, over: v > BigInt(limit) });
      }
    }
    for (const junk of ['', '-1', '1e9', ' 5', '12a']) expect(re.test(junk)).toBe(false);
  });
});
