import * as grpc from '@grpc/grpc-js';
import execa from 'execa';
import { promises as fs } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { externalProcessorService, headerText, type ProcessingRequest, type ProcessingResponse } from '../../controller/src/inference/ext-proc';

/**
 * An endpoint picker written for the tests, on the real gRPC stack: it records what each
 * request brought (headers, body, the client connection) and answers what the test says.
 */
export interface SeenRequest {
  headers: Record<string, string>;
  body: string;
  peer: string;
  /** What the response phase brought (when the gateway sent it). */
  response: {
    headers?: Record<string, string>;
    headersEndOfStream?: boolean;
    /** The envoy.lb metadata that came with the response headers. */
    served?: string;
    chunks: { body: string; endOfStream: boolean; at: number }[];
    trailers?: Record<string, string>;
  };
}

/** How the test picker takes part in the response. */
export interface ResponsePlan {
  /** mode_override in the first reply turning the response phase off. */
  skip?: boolean;
  /** Headers set on the response (response_headers reply). */
  setHeaders?: Record<string, string>;
  /**
   * 'pass' (default): an empty reply per chunk (STREAMED: the chunk goes on unchanged).
   * 'upper': a reply per chunk whose `body` replaces it, in upper case.
   * 'duplex': full duplex, as the upstream picker: every chunk sent back as streamed_response,
   * with `suffix` added to the last one.
   */
  body?: 'pass' | 'upper' | 'duplex';
  suffix?: string;
  /** Trailers set on the response's trailers (response_trailers reply). */
  setTrailers?: Record<string, string>;
  /** Fail the stream (gRPC INTERNAL) when the response headers, or the first body chunk, come. */
  failAt?: 'headers' | 'body';
}

export type PickerReply =
  | {
      endpoints: string;
      setHeaders?: Record<string, string>;
      /** Replace the request body in the reply to the body phase: whole, or as streamed chunks. */
      body?: { whole: string } | { chunks: string[] };
      response?: ResponsePlan;
    }
  | { immediate: number; body: string; headers?: Record<string, string> }
  | { fail: true };

export interface TestPicker {
  port: number;
  seen: SeenRequest[];
  reply: (seen: SeenRequest) => PickerReply;
  close(): Promise<void>;
}

export async function selfSignedCert(): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pc-cert-'));
  await execa('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=test-picker',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'k'), '-out', path.join(dir, 'c')]);
  const out = { key: await fs.readFile(path.join(dir, 'k')), cert: await fs.readFile(path.join(dir, 'c')) };
  await fs.rm(dir, { recursive: true, force: true });
  return out;
}

const option = (key: string, value: string) => ({ header: { key, raw_value: Buffer.from(value) }, append_action: 2 });

export async function startTestPicker(tls: { key: Buffer; cert: Buffer } | undefined, reply: TestPicker['reply'], port = 0): Promise<TestPicker> {
  const picker: TestPicker = { port: 0, seen: [], reply, close: async () => undefined };
  const server = new grpc.Server();
  server.addService(externalProcessorService(), {
    Process(call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>) {
      const headers: Record<string, string> = {};
      const body: Buffer[] = [];
      let decided: PickerReply | undefined;
      let seen: SeenRequest | undefined;
      const plan = (): ResponsePlan => (decided && 'endpoints' in decided ? decided.response ?? {} : {});
      const decide = () => {
        seen = { headers, body: Buffer.concat(body).toString(), peer: call.getPeer(), response: { chunks: [] } };
        picker.seen.push(seen);
        const r = picker.reply(seen);
        decided = r;
        if ('fail' in r) {
          call.emit('error', { code: grpc.status.INTERNAL, details: 'picker failure' });
          return;
        }
        if ('immediate' in r) {
          call.write({ immediate_response: { status: { code: r.immediate }, body: Buffer.from(r.body), headers: { set_headers: Object.entries(r.headers ?? {}).map(([k, v]) => option(k, v)) } } });
          return;
        }
        call.write({
          request_headers: {
            response: { header_mutation: { set_headers: [option('x-gateway-destination-endpoint', r.endpoints), ...Object.entries(r.setHeaders ?? {}).map(([k, v]) => option(k, v))] } },
          },
          ...(r.response?.skip ? { mode_override: { response_header_mode: 2, response_body_mode: 0, response_trailer_mode: 2 } } : {}),
        });
      };
      call.on('data', (m: ProcessingRequest) => {
        if (m.request_headers) {
          for (const h of m.request_headers.headers?.headers ?? []) headers[h.key] = headerText(h);
          if (m.request_headers.end_of_stream) decide();
        } else if (m.request_body) {
          if (m.request_body.body) body.push(Buffer.from(m.request_body.body));
          if (m.request_body.end_of_stream) {
            decide();
            const r = decided;
            if (r && 'endpoints' in r && r.body && 'whole' in r.body) {
              call.write({ request_body: { response: { body_mutation: { body: Buffer.from(r.body.whole) } } } });
            } else if (r && 'endpoints' in r && r.body && 'chunks' in r.body) {
              r.body.chunks.forEach((c, i, all) =>
                call.write({ request_body: { response: { body_mutation: { streamed_response: { body: Buffer.from(c), end_of_stream: i === all.length - 1 } } } } }),
              );
            } else call.write({ request_body: { response: {} } });
          }
        } else if (m.response_headers) {
          const h: Record<string, string> = {};
          for (const x of m.response_headers.headers?.headers ?? []) h[x.key] = headerText(x);
          if (seen) {
            seen.response.headers = h;
            seen.response.headersEndOfStream = !!m.response_headers.end_of_stream;
            const lb = m.metadata_context?.filter_metadata?.['envoy.lb']?.fields?.['x-gateway-destination-endpoint-served'];
            seen.response.served = lb?.stringValue;
          }
          if (plan().failAt === 'headers') {
            call.emit('error', { code: grpc.status.INTERNAL, details: 'picker failure in the response phase' });
            return;
          }
          call.write({ response_headers: { response: { header_mutation: { set_headers: Object.entries(plan().setHeaders ?? {}).map(([k, v]) => option(k, v)) } } } });
        } else if (m.response_body) {
          const chunk = Buffer.from(m.response_body.body ?? Buffer.alloc(0)).toString();
          const eos = !!m.response_body.end_of_stream;
          seen?.response.chunks.push({ body: chunk, endOfStream: eos, at: Date.now() });
          const p = plan();
          if (p.failAt === 'body') {
            call.emit('error', { code: grpc.status.INTERNAL, details: 'picker failure in the response phase' });
            return;
          }
          if (p.body === 'duplex') {
            call.write({ response_body: { response: { body_mutation: { streamed_response: { body: Buffer.from(chunk + (eos ? p.suffix ?? '' : '')), end_of_stream: eos } } } } });
          } else if (p.body === 'upper') {
            call.write({ response_body: { response: { body_mutation: { body: Buffer.from(chunk.toUpperCase()) } } } });
          } else call.write({ response_body: { response: {} } });
        } else if (m.response_trailers) {
          const t: Record<string, string> = {};
          for (const x of m.response_trailers.trailers?.headers ?? []) t[x.key] = headerText(x);
          if (seen) seen.response.trailers = t;
          call.write({ response_trailers: { header_mutation: { set_headers: Object.entries(plan().setTrailers ?? {}).map(([k, v]) => option(k, v)) } } });
        }
      });
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });
  const creds = tls ? grpc.ServerCredentials.createSsl(null, [{ private_key: tls.key, cert_chain: tls.cert }], false) : grpc.ServerCredentials.createInsecure();
  picker.port = await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, creds, (e, p) => (e ? reject(e) : resolve(p))));
  picker.close = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  return picker;
}

/** The picker as a Service + EndpointSlice, the way a pool's endpointPickerRef finds it. */
export function pickerService(name: string, port: number) {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'grpc', port: 9002, targetPort: port, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'grpc', port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
  ];
}
