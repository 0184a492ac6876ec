/**
 * An endpoint picker served over Envoy's ext_proc gRPC stream, as the inference extension's
 * protocol describes: the request headers (and body, until end_of_stream) come in; the reply to
 * the headers sets `x-gateway-destination-endpoint` (and the same value in the `envoy.lb`
 * dynamic metadata), or is an ImmediateResponse when no endpoint can take the request. Like the
 * upstream picker it answers only once the whole body is in (a picker may read the prompt).
 * It needs nothing from the response, so its first reply turns the response phase off
 * (`mode_override`: response headers and trailers SKIP, body NONE): no response chunk passes
 * through here. A request counts against its pod until its stream ends: our hop keeps the
 * stream open (quiet) until the response has ended, so the picker knows what is in flight; a
 * gateway that ends it as soon as the request is routed leaves the picker only the scrapes.
 */
import * as net from 'net';
import * as grpc from '@grpc/grpc-js';
import {
  DESTINATION_HEADER,
  externalProcessorService,
  headerOption,
  headerText,
  LB_METADATA_NAMESPACE,
  nestedStruct,
  type ProcessingRequest,
  type ProcessingResponse,
} from '../ext-proc';
import type { PickDecision } from './builtin';

/** Decides for one request: lower-case headers (pseudo-headers included) and the whole body. */
export type Decide = (headers: Record<string, string>, body: Buffer) => PickDecision;

/** ProcessingMode: response headers SKIP (2), body NONE (0), trailers SKIP (2). */
const NO_RESPONSE_PHASE = { response_header_mode: 2, response_body_mode: 0, response_trailer_mode: 2 };

export function pickerHandlers(decide: Decide, options: { responsePhase?: boolean } = {}): grpc.UntypedServiceImplementation {
  return {
    Process(call: grpc.ServerDuplexStream<ProcessingRequest, ProcessingResponse>) {
      let headers: Record<string, string> | undefined;
      const chunks: Buffer[] = [];
      let answered = false;
      let release: (() => void) | undefined;
      const answer = () => {
        if (answered || !headers) return;
        answered = true;
        const decision = decide(headers, Buffer.concat(chunks));
        if (decision.kind === 'endpoints') release = decision.release;
        if (decision.kind === 'reject') {
          call.write({ immediate_response: { status: { code: decision.status }, body: Buffer.from(decision.message), details: decision.message } });
          return;
        }
        const value = decision.endpoints.join(',');
        call.write({
          request_headers: { response: { header_mutation: { set_headers: [headerOption(DESTINATION_HEADER, value)] } } },
          dynamic_metadata: nestedStruct(LB_METADATA_NAMESPACE, DESTINATION_HEADER, value),
          ...(options.responsePhase ? {} : { mode_override: NO_RESPONSE_PHASE }),
        });
      };
      call.on('data', (req: ProcessingRequest) => {
        if (req.request_headers) {
          headers = {};
          for (const h of req.request_headers.headers?.headers ?? []) headers[h.key.toLowerCase()] = headerText(h);
          if (req.request_headers.end_of_stream) answer();
        } else if (req.request_body) {
          if (req.request_body.body) chunks.push(Buffer.from(req.request_body.body));
          if (req.request_body.end_of_stream) {
            answer();
            // The body phase gets its own (empty) reply: nothing to change.
            call.write({ request_body: { response: {} } });
          }
        } else if (req.response_headers) {
          // (a gateway that ignores the override) nothing to change
          call.write({ response_headers: { response: {} } });
        } else if (req.response_body) {
          call.write({ response_body: { response: {} } });
        } else if (req.response_trailers) {
          call.write({ response_trailers: {} });
        }
      });
      // The gateway ends the stream when the request is over (or cancels it): no longer in flight.
      const ended = () => release?.();
      call.on('end', () => {
        ended();
        call.end();
      });
      call.on('cancelled', ended);
      call.on('close', ended);
      call.on('error', ended);
    },
  };
}

export interface PickerServerOptions {
  host: string;
  port: number;
  /** PEM key and certificate; absent: plaintext (h2c). */
  tls?: { key: Buffer; cert: Buffer };
  /** Take the response phase (passing every chunk through) instead of turning it off. */
  responsePhase?: boolean;
}

/**
 * Starts a gRPC server with the ExternalProcessor service; resolves with the bound port. The
 * listening socket is ours (connections injected into grpc-js) so that every connection gets
 * TCP_NODELAY: grpc-js writes a reply's HEADERS and DATA frames separately, and with Nagle the
 * DATA waits for the gateway's delayed ACK (p50 16 ms per pick instead of about 1 ms).
 */
export async function startPickerServer(decide: Decide, options: PickerServerOptions): Promise<{ port: number; server: { tryShutdown(cb: () => void): void } }> {
  const server = new grpc.Server();
  server.addService(externalProcessorService(), pickerHandlers(decide, { responsePhase: options.responsePhase }));
  const creds = options.tls ? grpc.ServerCredentials.createSsl(null, [{ private_key: options.tls.key, cert_chain: options.tls.cert }], false) : grpc.ServerCredentials.createInsecure();
  const injector = server.createConnectionInjector(creds);
  const listener = net.createServer({ noDelay: true }, (socket) => injector.injectConnection(socket));
  await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(options.port, options.host, () => resolve()));
  const port = (listener.address() as net.AddressInfo).port;
  return {
    port,
    server: {
      tryShutdown(cb) {
        listener.close();
        server.tryShutdown(() => cb());
      },
    },
  };
}
