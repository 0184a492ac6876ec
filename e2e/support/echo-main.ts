/**
 * Echo backends as a process of their own, for a network namespace (`ip netns exec NS node -r
 * tsx/cjs e2e/support/echo-main.ts HOST NAME...`): one server per name on HOST, ports chosen
 * by the OS; prints {"name": port, ...} on one line once all listen, and runs until killed.
 */
import { startEchoBackend } from './echo-backend';

async function main(): Promise<void> {
  const [host, ...names] = process.argv.slice(2);
  const ports: Record<string, number> = {};
  for (const name of names) ports[name] = (await startEchoBackend(name, { host })).port;
  process.stdout.write(`${JSON.stringify(ports)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
