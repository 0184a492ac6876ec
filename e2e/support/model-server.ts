import * as http from 'http';
import * as http2 from 'http2';

/**
 * A fake vLLM-style model server on loopback ("a pod"): OpenAI completions and chat completions
 * (JSON or server-sent events), and /metrics with the load the test sets. Every answer names
 * the pod (`pod` in JSON, `x-served-by` header) and echoes the request headers it got.
 */
export interface ModelServer {
  name: string;
  address: string;
  port: number;
  /** "address:port" as an endpoint picker names it. */
  endpoint: string;
  /** Load reported on /metrics. */
  load: { waiting: number; running: number; kvCache: number };
  /** Added before each answer (a slow pod). */
  delayMs: number;
  /** Requests served so far (completions and chats, not /metrics). */
  served: number;
  /** Bodies of the requests received, in order. */
  bodies: string[];
  close(): Promise<void>;
}

export interface ModelServerOptions {
  address?: string;
  port?: number;
  /** Gap between two streamed tokens. */
  tokenGapMs?: number;
  /** The load counts the requests in progress as running (and those beyond `slots` as waiting). */
  slots?: number;
  /** Speak HTTP/2 without TLS only (an `appProtocol: kubernetes.io/h2c` pod); HTTP/1.1 is refused. */
  h2c?: boolean;
}

const TOKENS = ['Port', 'cul', 'lis', ' routes', ' tokens', '.'];

export async function startModelServer(name: string, options: ModelServerOptions = {}): Promise<ModelServer> {
  const address = options.address ?? '127.0.0.1';
  let inProgress = 0;
  const sessions = new Set<http2.ServerHttp2Session>();
  // The compatibility API gives HTTP/2 requests the same (req, res) shape as HTTP/1.1.
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && url === '/metrics') {
        const running = model.load.running + (options.slots !== undefined ? Math.min(inProgress, options.slots) : 0);
        const waiting = model.load.waiting + (options.slots !== undefined ? Math.max(0, inProgress - options.slots) : 0);
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(
          [
            '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
            '# TYPE vllm:num_requests_waiting gauge',
            `vllm:num_requests_waiting{model_name="fake"} ${waiting}`,
            '# TYPE vllm:num_requests_running gauge',
            `vllm:num_requests_running{model_name="fake"} ${running}`,
            '# TYPE vllm:kv_cache_usage_perc gauge',
            `vllm:kv_cache_usage_perc{model_name="fake"} ${model.load.kvCache}`,
            '',
          ].join('\n'),
        );
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      if (url === '/_control') {
        // Another process (a benchmark) sets the load and delay, and reads what was served.
        if (req.method === 'POST') Object.assign(model, JSON.parse(text || '{}'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ served: model.served, load: model.load, delayMs: model.delayMs, lastBody: model.bodies[model.bodies.length - 1] }));
        return;
      }
      const answer = (status: number, body: unknown) => {
        const json = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'x-served-by': name, 'content-length': Buffer.byteLength(json) });
        res.end(json);
      };
      // Any prefix before the OpenAI path (a route may keep its own prefix, as /pool/v1/completions).
      if (!url.endsWith('/v1/completions') && !url.endsWith('/v1/chat/completions')) {
        answer(200, { pod: name, path: req.url, method: req.method, headers: req.headers });
        return;
      }
      model.bodies.push(text);
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        answer(400, { error: { message: 'body is not JSON' } });
        return;
      }
      const chat = url.endsWith('/v1/chat/completions');
      if (typeof body?.model !== 'string' || (chat ? !Array.isArray(body.messages) : typeof body.prompt !== 'string')) {
        answer(400, { error: { message: chat ? 'model and messages are required' : 'model and prompt are required' } });
        return;
      }
      model.served++;
      inProgress++;
      const done = () => inProgress--;
      const count = Math.max(1, Math.min(TOKENS.length, Number(body.max_tokens) || TOKENS.length));
      setTimeout(() => {
        if (!body.stream) {
          done();
          const content = TOKENS.slice(0, count).join('');
          answer(200, {
            id: `cmpl-${model.served}`,
            object: chat ? 'chat.completion' : 'text_completion',
            model: body.model,
            pod: name,
            headers: req.headers,
            choices: [chat ? { index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' } : { index: 0, text: content, finish_reason: 'stop' }],
          });
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-served-by': name });
        let i = 0;
        const next = () => {
          if (i === count) {
            res.end('data: [DONE]\n\n');
            done();
            return;
          }
          const token = TOKENS[i++];
          const delta = chat ? { choices: [{ index: 0, delta: { content: token } }] } : { choices: [{ index: 0, text: token }] };
          res.write(`data: ${JSON.stringify({ pod: name, at: Date.now(), ...delta })}\n\n`);
          setTimeout(next, options.tokenGapMs ?? 100);
        };
        next();
      }, model.delayMs);
    });
  };
  const server = options.h2c ? http2.createServer(handler as never) : http.createServer(handler);
  if (options.h2c) server.on('session', (s: http2.ServerHttp2Session) => (sessions.add(s), s.on('close', () => sessions.delete(s))));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, address, () => resolve()));
  const port = (server.address() as { port: number }).port;
  const model: ModelServer = {
    name,
    address,
    port,
    endpoint: `${address}:${port}`,
    load: { waiting: 0, running: 0, kvCache: 0 },
    delayMs: 0,
    served: 0,
    bodies: [],
    close: () =>
      new Promise<void>((resolve) => {
        if (server instanceof http.Server) server.closeAllConnections();
        // (an HTTP/2 server's connections are its sessions)
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
  return model;
}

/** A Pod manifest for a model server: labels for the pool's selector, its IP, Ready. */
export function podFor(m: Pick<ModelServer, 'name' | 'address'>, labels: Record<string, string>, namespace?: string, ready = true) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: m.name, ...(namespace ? { namespace } : {}), labels },
    status: { phase: 'Running', podIP: m.address, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

export function inferencePool(
  name: string,
  spec: { labels: Record<string, string>; ports: number[]; picker?: { name: string; port: number; failureMode?: 'FailOpen' | 'FailClose'; kind?: string } },
  namespace?: string,
) {
  return {
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: {
      selector: { matchLabels: spec.labels },
      targetPorts: spec.ports.map((number) => ({ number })),
      ...(spec.picker
        ? { endpointPickerRef: { ...(spec.picker.kind ? { kind: spec.picker.kind } : {}), name: spec.picker.name, port: { number: spec.picker.port }, ...(spec.picker.failureMode ? { failureMode: spec.picker.failureMode } : {}) } }
        : {}),
    },
  };
}
