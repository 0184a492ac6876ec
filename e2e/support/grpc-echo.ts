/**
 * A real gRPC echo backend and client (@grpc/grpc-js over h2c), shaped like the Gateway API
 * conformance gRPC echo: service gateway_api_conformance.echo_basic.grpcecho.GrpcEcho with
 * Echo, EchoTwo and EchoThree answering which backend ("pod") took the call, the full method,
 * the :authority and the request metadata; plus a server-streaming Stream method (one message
 * every `intervalMs`, `count` messages) for long-lived calls. Messages are JSON: the framing,
 * HTTP/2, metadata and status trailers are real gRPC; only the payload encoding is not protobuf.
 */
import * as grpc from '@grpc/grpc-js';

export const ECHO_SERVICE = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';

export interface GrpcEchoReply {
  backend: string;
  fullyQualifiedMethod: string;
  authority: string;
  /** Metadata keys in lower case; repeated values joined with ", ". */
  headers: Record<string, string>;
}

const serialize = (v: unknown) => Buffer.from(JSON.stringify(v ?? {}));
const deserialize = (b: Buffer) => (b.length === 0 ? {} : JSON.parse(b.toString('utf8')));

function method(path: string, responseStream = false): grpc.MethodDefinition<any, any> {
  return { path, requestStream: false, responseStream, requestSerialize: serialize, requestDeserialize: deserialize, responseSerialize: serialize, responseDeserialize: deserialize };
}

export interface GrpcEchoBackend {
  name: string;
  port: number;
  calls: GrpcEchoReply[];
  close(): Promise<void>;
}

function replyOf(name: string, call: grpc.ServerUnaryCall<any, any> | grpc.ServerWritableStream<any, any>): GrpcEchoReply {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.metadata.getMap())) headers[k.toLowerCase()] = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  return { backend: name, fullyQualifiedMethod: call.getPath(), authority: call.getHost(), headers };
}

/**
 * `host`: the address to listen on (a non-loopback one when an EndpointSlice must name it);
 * `tls`: serve over TLS with this certificate and key (PEM) instead of h2c.
 */
export async function startGrpcEchoBackend(name: string, host = '127.0.0.1', tls?: { cert: string; key: string }): Promise<GrpcEchoBackend> {
  const server = new grpc.Server();
  const calls: GrpcEchoReply[] = [];
  const unary = (m: string): grpc.handleUnaryCall<any, any> => (call, cb) => {
    const reply = replyOf(name, call);
    calls.push(reply);
    cb(null, reply);
  };
  const stream: grpc.handleServerStreamingCall<any, any> = (call) => {
    const { count = 5, intervalMs = 200 } = (call.request ?? {}) as { count?: number; intervalMs?: number };
    const reply = replyOf(name, call);
    calls.push(reply);
    let sent = 0;
    const timer = setInterval(() => {
      if (call.cancelled) {
        clearInterval(timer);
        return;
      }
      call.write({ ...reply, seq: sent++ });
      if (sent >= count) {
        clearInterval(timer);
        call.end();
      }
    }, intervalMs);
    call.on('cancelled', () => clearInterval(timer));
  };
  server.addService(
    {
      Echo: method(`/${ECHO_SERVICE}/Echo`),
      EchoTwo: method(`/${ECHO_SERVICE}/EchoTwo`),
      EchoThree: method(`/${ECHO_SERVICE}/EchoThree`),
      Stream: method(`/${ECHO_SERVICE}/Stream`, true),
    },
    { Echo: unary('Echo'), EchoTwo: unary('EchoTwo'), EchoThree: unary('EchoThree'), Stream: stream },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${host}:0`,
      tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], false) : grpc.ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  return {
    name,
    port,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000).unref();
      }),
  };
}

export interface GrpcResult {
  /** 0 = OK. */
  code: number;
  details?: string;
  reply?: GrpcEchoReply;
  /** Trailing metadata (grpc-status and friends stripped by grpc-js). */
  trailers?: Record<string, string>;
}

/** A client channel to the gateway (or a backend) with the given :authority. */
export function grpcClient(port: number, authority?: string): grpc.Client {
  return new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), authority ? { 'grpc.default_authority': authority } : {});
}

/** One unary call: `/service/method` with metadata; resolves with the status, never rejects. */
export function grpcCall(client: grpc.Client, path: string, metadata: Record<string, string> = {}, request: unknown = {}, deadlineMs = 5000): Promise<GrpcResult> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, serialize, deserialize, request, md, { deadline: Date.now() + deadlineMs }, (err, reply) => {
      if (err) resolve({ code: err.code, details: err.details });
      else resolve({ code: 0, reply });
    });
  });
}

/** The echo's Echo / EchoTwo / EchoThree. */
export const echoPath = (m: 'Echo' | 'EchoTwo' | 'EchoThree' | 'Stream' = 'Echo') => `/${ECHO_SERVICE}/${m}`;

/** A server-streaming call; `onMessage` sees each message as it arrives. */
export function grpcStream(client: grpc.Client, request: { count: number; intervalMs: number }, onMessage: (m: GrpcEchoReply & { seq: number }) => void): Promise<GrpcResult> {
  return new Promise((resolve) => {
    const call = client.makeServerStreamRequest(echoPath('Stream'), serialize, deserialize, request, new grpc.Metadata(), {});
    call.on('data', onMessage);
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
    call.on('error', () => undefined);
  });
}
