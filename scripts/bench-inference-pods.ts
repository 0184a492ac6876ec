/**
 * The model servers of bench:inference in a process of their own (so the load generator does
 * not share their event loop): `tsx scripts/bench-inference-pods.ts PORT ADDRESS...` starts one
 * fake vLLM-style server per address on PORT, prints "ready", and is steered over /_control.
 */
import { startModelServer } from '../e2e/support/model-server';

(async () => {
  const [port, ...addresses] = process.argv.slice(2);
  for (const [i, address] of addresses.entries()) await startModelServer(`pod-${i}`, { address, port: Number(port), slots: 2 });
  process.stdout.write('ready\n');
})();
