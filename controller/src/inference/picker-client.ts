/**
 * The gateway's side of the endpoint-picker protocol: one ext_proc stream per request over a
 * channel kept per picker (HTTP/2, reused by every request, unlike a dial per request). The
 * request headers (with Envoy's pseudo-headers) and the whole body are sent, the stream is
 * half-closed, and the answer is the destination the replies name, or an ImmediateResponse
 * (429, 503...) to hand to the client as is. When a body was sent, the answer also waits for
 * the reply to the body (as Envoy does), which may replace it: a BodyMutation with the whole
 * body, clear_body, or streamed_response chunks up to end_of_stream (a picker that rewrites the
 * model name, e.g. to a LoRA adapter, does this).
 */
import * as grpc from '@grpc/grpc-js';
import {
  DESTINATION_HEADER,
  externalProcessorService,
  headerText,
  LB_METADATA_NAMESPACE,
  structString,
  type HeaderMutation,
  type ProcessingRequest,
  type ProcessingResponse,
} from './ext-proc';

export type PickerAnswer =
  | { kind: 'route'; endpoints: string[]; setHeaders: [string, string][]; removeHeaders: string[]; /** The body the picker replaced the request's with. */ body?: Buffer }
  | { kind: 'immediate'; status: number; headers: [string, string][]; body: Buffer };

export interface PickerClientOptions {
  /** false: plaintext h2c. Default true. */
  tls?: boolean;
  /** Verify the picker's certificate (default false: pickers make self-signed ones at start). */
  verify?: boolean;
  /** PEM roots for verification (default: the system's). */
  ca?: Buffer;
  /** Per-request deadline. */
  timeoutMs?: number;
}

export class PickerError extends Error {}

function mutationHeaders(m: HeaderMutation | undefined, set: [string, string][], remove: string[]): void {
  for (const o of m?.set_headers ?? []) if (o.header?.key) set.push([o.header.key.toLowerCase(), headerText(o.header)]);
  for (const r of m?.remove_headers ?? []) remove.push(r.toLowerCase());
}

/** "a:1, b:2" -> ["a:1", "b:2"]. */
export function destinationList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

export class PickerClients {
  private readonly clients = new Map<string, grpc.Client>();
  private readonly credentials: grpc.ChannelCredentials;
  private readonly method = externalProcessorService().Process;

  constructor(private readonly options: PickerClientOptions = {}) {
    this.credentials =
      options.tls === false
        ? grpc.credentials.createInsecure()
        : grpc.credentials.createSsl(options.ca ?? null, null, null, options.verify ? {} : { rejectUnauthorized: false, checkServerIdentity: () => undefined });
  }

  /** One channel per picker address list, created on first use. */
  private client(addresses: string[]): grpc.Client {
    const key = addresses.join(',');
    let c = this.clients.get(key);
    if (!c) {
      const v6 = addresses.some((a) => a.startsWith('['));
      const target = addresses.length === 1 ? addresses[0] : `${v6 ? 'ipv6' : 'ipv4'}:${addresses.join(',')}`;
      c = new grpc.Client(target, this.credentials, {
        'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
        'grpc.keepalive_time_ms': 30_000,
        // Pickers answer fast; a lost one should be noticed on the next request, not after minutes.
        'grpc.initial_reconnect_backoff_ms': 200,
        'grpc.max_reconnect_backoff_ms': 2000,
      });
      this.clients.set(key, c);
    }
    return c;
  }

  /** Ask the picker at `addresses`; rejects with PickerError when it is down or answers nothing usable. */
  ask(addresses: string[], headers: [string, string][], body: Buffer): Promise<PickerAnswer> {
    if (addresses.length === 0) return Promise.reject(new PickerError('the endpoint picker has no ready address'));
    const client = this.client(addresses);
    return new Promise<PickerAnswer>((resolve, reject) => {
      const deadline = Date.now() + (this.options.timeoutMs ?? 10_000);
      const call = client.makeBidiStreamRequest(PROCESS_PATH, this.method.requestSerialize, this.method.responseDeserialize, new grpc.Metadata(), { deadline }) as grpc.ClientDuplexStream<
        ProcessingRequest,
        ProcessingResponse
      >;
      let settled = false;
      const set: [string, string][] = [];
      const remove: string[] = [];
      const hasBody = body.length > 0;
      let route: Extract<PickerAnswer, { kind: 'route' }> | undefined;
      // The reply to the body phase: undefined until it came (only awaited when a body was sent).
      let bodyDone = !hasBody;
      let newBody: Buffer | undefined;
      const streamed: Buffer[] = [];
      const finish = (answer?: PickerAnswer, error?: Error) => {
        if (settled) return;
        settled = true;
        if (answer) resolve(answer);
        else reject(error ?? new PickerError('the endpoint picker chose no endpoint'));
      };
      // The stream ended: a destination already named is followed even without a body reply.
      const ended = () => finish(route && (newBody ? { ...route, body: newBody } : route));
      call.on('data', (r: ProcessingResponse) => {
        if (settled) return;
        if (r.immediate_response) {
          const ir = r.immediate_response;
          const h: [string, string][] = [];
          mutationHeaders(ir.headers, h, []);
          finish({ kind: 'immediate', status: ir.status?.code || 500, headers: h, body: ir.body ? Buffer.from(ir.body) : Buffer.alloc(0) });
          return;
        }
        const common = r.request_headers?.response ?? r.request_body?.response;
        mutationHeaders(common?.header_mutation, set, remove);
        if (r.request_body) {
          const m = common?.body_mutation;
          if (m?.streamed_response) {
            if (m.streamed_response.body) streamed.push(Buffer.from(m.streamed_response.body));
            if (m.streamed_response.end_of_stream) {
              newBody = Buffer.concat(streamed);
              bodyDone = true;
            }
          } else {
            if (m?.body) newBody = Buffer.from(m.body);
            else if (m?.clear_body) newBody = Buffer.alloc(0);
            bodyDone = true;
          }
        }
        let destination = set.find(([k]) => k === DESTINATION_HEADER)?.[1];
        destination ??= structString(r.dynamic_metadata, LB_METADATA_NAMESPACE, DESTINATION_HEADER);
        if (destination) route = { kind: 'route', endpoints: destinationList(destination), setHeaders: set, removeHeaders: remove };
        if (route && bodyDone) finish(newBody ? { ...route, body: newBody } : route);
      });
      call.on('error', (e: Error) => (route ? ended() : finish(undefined, new PickerError(`endpoint picker: ${e.message}`))));
      call.on('end', ended);
      call.on('status', ended);
      call.write({ request_headers: { headers: { headers: headers.map(([key, v]) => ({ key, raw_value: Buffer.from(v, 'latin1') })) }, end_of_stream: !hasBody } });
      if (hasBody) call.write({ request_body: { body, end_of_stream: true } });
      call.end();
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

const PROCESS_PATH = '/envoy.service.ext_proc.v3.ExternalProcessor/Process';
