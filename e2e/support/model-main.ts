/**
 * Fake model servers as a process of their own, for a network namespace (`ip netns exec NS node
 * -r tsx/cjs e2e/support/model-main.ts HOST PORT NAME...`): one server per name on HOST (PORT 0:
 * chosen by the OS, and then each name gets its own), prints {"name": port, ...} on one line
 * once all listen, and runs until killed. A pod's load is set over HTTP (POST /_control).
 */
import { startModelServer } from './model-server';

async function main(): Promise<void> {
  const [host, port, ...names] = process.argv.slice(2);
  const ports: Record<string, number> = {};
  for (const name of names) ports[name] = (await startModelServer(name, { address: host, port: Number(port) })).port;
  process.stdout.write(`${JSON.stringify(ports)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
