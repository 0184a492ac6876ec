/**
 * The gateway's channels to endpoint pickers: one per picker (HTTP/2, reused by every request,
 * unlike a dial per request), each request an ext_proc stream of its own (picker-stream.ts
 * holds what is said on it).
 */
import * as grpc from '@grpc/grpc-js';
import { externalProcessorService, type ProcessingRequest, type ProcessingResponse } from './ext-proc';
import { PickerError, PickerStream } from './picker-stream';

export { destinationList, PickerError, type PickerAnswer } from './picker-stream';

export interface PickerClientOptions {
  /** false: plaintext h2c. Default true. */
  tls?: boolean;
  /** Verify the picker's certificate (default false: pickers make self-signed ones at start). */
  verify?: boolean;
  /** PEM roots for verification (default: the system's). */
  ca?: Buffer;
  /** How long the hop waits for a reply the protocol says must come (default 10 s). */
  timeoutMs?: number;
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

  /** A new ext_proc stream to the picker at `addresses` (one per request). */
  open(addresses: string[]): PickerStream {
    if (addresses.length === 0) throw new PickerError('the endpoint picker has no ready address');
    // No gRPC deadline: a streamed response may last minutes; each awaited reply is timed instead.
    const call = this.client(addresses).makeBidiStreamRequest(PROCESS_PATH, this.method.requestSerialize, this.method.responseDeserialize, new grpc.Metadata()) as grpc.ClientDuplexStream<
      ProcessingRequest,
      ProcessingResponse
    >;
    return new PickerStream(call, this.options.timeoutMs ?? 10_000);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

const PROCESS_PATH = '/envoy.service.ext_proc.v3.ExternalProcessor/Process';
