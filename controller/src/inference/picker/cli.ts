/**
 * portcullis-picker: the built-in endpoint picker as a standalone ext_proc server, for any
 * gateway that speaks the inference extension's protocol. No cluster needed: the endpoints come
 * from a flag or a file (re-read when it changes).
 *
 *   portcullis-picker --endpoints=IP:PORT,... | --endpoints-file=FILE
 *       [--address=127.0.0.1] [--grpc-port=9002] [--secure-serving=true] [--cert-path=DIR]
 *       [--refresh-metrics-interval-ms=50]
 */
import { watch, promises as fs } from 'fs';
import * as path from 'path';
import * as os from 'os';
import execa from 'execa';
import { createLogger } from '../../log';
import { readFlags, UsageError } from '../../command';
import { BuiltinPicker } from './builtin';
import { startPickerServer } from './server';

export const PICKER_USAGE = `Usage: portcullis-picker (--endpoints=IP:PORT,... | --endpoints-file=FILE) [options]

An endpoint picker (Envoy ext_proc over gRPC) that scrapes each endpoint's vLLM-style
/metrics and sends each request to the least loaded one. Honours the conformance header
test-epp-endpoint-selection.

  --endpoints=LIST                   model-server endpoints, comma-separated ip:port
  --endpoints-file=FILE              one endpoint per line (or comma-separated); re-read on change
  --address=ADDR                     listen address (default 127.0.0.1)
  --grpc-port=PORT                   ext_proc port (default 9002; 0 = any, printed at start)
  --secure-serving=BOOL              TLS (default true; a self-signed certificate is made at
                                     start unless --cert-path holds tls.crt and tls.key)
  --cert-path=DIR                    tls.crt and tls.key to serve
  --refresh-metrics-interval-ms=MS   scrape interval (default 50)
  --response-phase=BOOL              take part in the response phase (default false: the first
                                     reply turns it off; true: each chunk passes through here,
                                     what a picker that reads usage from responses costs)
`;

function parseList(text: string): string[] {
  return text.split(/[\s,]+/).map((s) => s.trim()).filter((s) => s && !s.startsWith('#'));
}

/** A self-signed certificate for 127.0.0.1/localhost, made with openssl (as pickers do at start). */
async function selfSigned(): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'portcullis-picker-'));
  try {
    await execa('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '365', '-subj', '/CN=portcullis-picker',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', path.join(dir, 'tls.key'), '-out', path.join(dir, 'tls.crt')]);
    return { key: await fs.readFile(path.join(dir, 'tls.key')), cert: await fs.readFile(path.join(dir, 'tls.crt')) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function pickerMain(argv: string[]): Promise<number> {
  let flags: Map<string, string>;
  try {
    flags = readFlags(argv, { values: ['endpoints', 'endpoints-file', 'address', 'grpc-port', 'cert-path', 'refresh-metrics-interval-ms', 'log-level'], switches: ['secure-serving', 'response-phase'] });
    if (!flags.has('help') && flags.has('endpoints') === flags.has('endpoints-file')) throw new UsageError('give exactly one of --endpoints and --endpoints-file');
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`portcullis-picker: ${e.message}\n\n${PICKER_USAGE}`);
    return 64;
  }
  if (flags.has('help')) {
    process.stdout.write(PICKER_USAGE);
    return 0;
  }
  const log = createLogger({ level: 'info', fields: { component: 'picker' } });
  let endpoints = parseList(flags.get('endpoints') ?? '');
  const file = flags.get('endpoints-file');
  if (file) {
    const load = async () => {
      try {
        endpoints = parseList(await fs.readFile(file, 'utf8'));
        log.info('endpoints loaded', { count: endpoints.length });
      } catch (e) {
        log.error('endpoints file unreadable; keeping the last list', { error: (e as Error).message });
      }
    };
    await load();
    watch(path.dirname(path.resolve(file)), () => void load()).unref();
  }
  const picker = new BuiltinPicker({ intervalMs: Number(flags.get('refresh-metrics-interval-ms') ?? 50) });
  let tls: { key: Buffer; cert: Buffer } | undefined;
  if (flags.get('secure-serving') !== 'false') {
    const certPath = flags.get('cert-path');
    tls = certPath ? { key: await fs.readFile(path.join(certPath, 'tls.key')), cert: await fs.readFile(path.join(certPath, 'tls.crt')) } : await selfSigned();
  }
  const { port, server } = await startPickerServer((headers) => picker.pick('pool', endpoints, headers), {
    host: flags.get('address') ?? '127.0.0.1',
    port: Number(flags.get('grpc-port') ?? 9002),
    tls,
    responsePhase: flags.get('response-phase') === 'true',
  });
  log.info('endpoint picker listening', { port, tls: !!tls });
  return new Promise<number>((resolve) => {
    const stop = () => {
      picker.close();
      server.tryShutdown(() => resolve(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

if (require.main === module || require.main?.filename.endsWith('portcullis-picker.js')) {
  pickerMain(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`portcullis-picker: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
