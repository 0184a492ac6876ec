/**
 * portcullis-inference-hop: the inference hop next to nginx (see hop.ts). The controller starts
 * it in standalone mode; on Kubernetes it runs in the data-plane pod beside nginx.
 *
 *   portcullis-inference-hop (--port=PORT | --socket=PATH) [--endpoint-picker-disable-tls]
 *       [--endpoint-picker-tls-verify [--endpoint-picker-ca-file=FILE]] [--log-level=info]
 */
import { promises as fs } from 'fs';
import { createLogger, isLogLevel } from '../log';
import { readFlags, UsageError } from '../command';
import { InferenceHop } from './hop';

export const HOP_USAGE = `Usage: portcullis-inference-hop (--port=PORT | --socket=PATH) [options]

Receives requests for InferencePool backends from nginx, asks the pool's endpoint picker
(ext_proc over gRPC, TLS without certificate verification by default) and proxies them to the
chosen pod.

  --port=PORT                        loopback TCP port nginx proxies to
  --socket=PATH                      or a unix socket (made reachable by nginx's workers)
  --endpoint-picker-disable-tls      talk to pickers in plaintext (h2c)
  --endpoint-picker-tls-verify       verify pickers' certificates (default: not verified)
  --endpoint-picker-ca-file=FILE     PEM roots for --endpoint-picker-tls-verify
  --endpoint-picker-timeout-ms=MS    deadline of one picker call (default 10000)
  --log-level=LEVEL                  debug, info, warn, error (default info)
`;

export async function hopMain(argv: string[]): Promise<number> {
  let flags: Map<string, string>;
  try {
    flags = readFlags(argv, {
      values: ['socket', 'endpoint-picker-ca-file', 'endpoint-picker-timeout-ms', 'log-level', 'port'],
      switches: ['endpoint-picker-disable-tls', 'endpoint-picker-tls-verify'],
    });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`portcullis-inference-hop: ${e.message}\n\n${HOP_USAGE}`);
    return 64;
  }
  if (flags.has('help')) {
    process.stdout.write(HOP_USAGE);
    return 0;
  }
  const level = flags.get('log-level') ?? 'info';
  if (!isLogLevel(level) || (!flags.has('socket') && !flags.has('port'))) {
    process.stderr.write(`portcullis-inference-hop: --port or --socket is required and --log-level must be debug, info, warn or error\n\n${HOP_USAGE}`);
    return 64;
  }
  const log = createLogger({ level, fields: { component: 'inference-hop' } });
  const ca = flags.get('endpoint-picker-ca-file');
  const hop = new InferenceHop({
    socket: flags.get('socket'),
    port: flags.has('port') ? Number(flags.get('port')) : undefined,
    log,
    picker: {
      tls: flags.get('endpoint-picker-disable-tls') !== 'true',
      verify: flags.get('endpoint-picker-tls-verify') === 'true',
      ca: ca ? await fs.readFile(ca) : undefined,
      timeoutMs: flags.has('endpoint-picker-timeout-ms') ? Number(flags.get('endpoint-picker-timeout-ms')) : undefined,
    },
  });
  const where = await hop.listen();
  log.info('inference hop listening', { address: where });
  return new Promise<number>((resolve) => {
    const stop = () => void hop.close().then(() => resolve(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

if (require.main === module || require.main?.filename.endsWith('portcullis-inference-hop.js')) {
  hopMain(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`portcullis-inference-hop: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
