/**
 * One request's ext_proc stream with an endpoint picker, both phases, as Envoy runs it with the
 * inference extension's reference configuration (request and response headers SEND, bodies
 * FULL_DUPLEX_STREAMED, trailers SEND):
 * - request phase (`request()`): the request headers (with Envoy's pseudo-headers) and the whole
 *   body; the answer is the destination the replies name, or an ImmediateResponse. When a body
 *   was sent the answer also waits for the reply to the body, which may replace it (BodyMutation
 *   body, clear_body, or streamed_response chunks up to end_of_stream).
 * - response phase (`respond()`), unless the picker's `mode_override` turned it off: the
 *   response headers (`:status` first, and the `envoy.lb` metadata naming the endpoint that
 *   served, which the conformance picker reports back), each body chunk as it comes (never
 *   buffered: server-sent events reach the client token by token, one picker round trip later),
 *   then an empty end_of_stream chunk, or the trailers when the response has some.
 *   What the client gets follows the replies: header and trailer mutations apply; a body reply
 *   with `streamed_response` means the picker sends the body itself (full duplex: its chunks
 *   are what the client gets, up to its end_of_stream); any other body reply stands for the
 *   oldest chunk not yet accounted for (STREAMED: that chunk unchanged, or the reply's `body`
 *   in its place, or nothing for `clear_body`).
 * A picker that closes the stream cleanly is done: the rest passes through unchanged (as Envoy
 * continues without the processor). One that fails or stays silent past the timeout during the
 * response: FailOpen passes the rest through when it can (chunks the picker took over are lost:
 * the response is cut), FailClose answers 502 before the headers went out and cuts the response
 * after.
 */
import type * as grpc from '@grpc/grpc-js';
import {
  DESTINATION_HEADER,
  headerText,
  LB_METADATA_NAMESPACE,
  SERVED_ENDPOINT_KEY,
  structString,
  type HeaderMutation,
  type ProcessingMode,
  type ProcessingRequest,
  type ProcessingResponse,
} from './ext-proc';

export type PickerAnswer =
  | { kind: 'route'; endpoints: string[]; setHeaders: [string, string][]; removeHeaders: string[]; /** The body the picker replaced the request's with. */ body?: Buffer }
  | { kind: 'immediate'; status: number; headers: [string, string][]; body: Buffer };

export class PickerError extends Error {}

/** Which parts of the response go to the picker. */
export interface ResponseModes {
  headers: boolean;
  body: boolean;
  trailers: boolean;
}

/** The inference extension's reference Envoy configuration: everything is sent. */
export const DEFAULT_RESPONSE_MODES: ResponseModes = { headers: true, body: true, trailers: true };

/**
 * A `mode_override` as Envoy reads it (the whole override replaces the mode): headers DEFAULT
 * or SEND are sent, SKIP not; a body mode other than NONE is sent chunk by chunk as it comes
 * (BUFFERED too: holding a streamed answer back is what this hop never does); trailers only on
 * SEND (DEFAULT is SKIP for trailers).
 */
export function responseModes(o: ProcessingMode): ResponseModes {
  return { headers: (o.response_header_mode ?? 0) !== 2, body: (o.response_body_mode ?? 0) !== 0, trailers: o.response_trailer_mode === 1 };
}

function mutationHeaders(m: HeaderMutation | undefined, set: [string, string][], remove: string[]): void {
  for (const o of m?.set_headers ?? []) if (o.header?.key) set.push([o.header.key.toLowerCase(), headerText(o.header)]);
  for (const r of m?.remove_headers ?? []) remove.push(r.toLowerCase());
}

/** "a:1, b:2" -> ["a:1", "b:2"]. */
export function destinationList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

const toHeaderMap = (headers: [string, string][]) => ({ headers: headers.map(([key, v]) => ({ key, raw_value: Buffer.from(v, 'latin1') })) });

/** Headers after a picker's mutation: removed names dropped, set names replaced (pseudo-headers never). */
export function applyMutation(headers: [string, string][], set: [string, string][], remove: string[], protectedNames: Set<string>): [string, string][] {
  const drop = new Set([...remove, ...set.map(([k]) => k)].filter((k) => !k.startsWith(':') && !protectedNames.has(k)));
  const out = headers.filter(([k]) => !drop.has(k));
  for (const [k, v] of set) if (!k.startsWith(':') && !protectedNames.has(k)) out.push([k, v]);
  return out;
}

/** Where the response goes (the client), as the replies decide. */
export interface ResponseTarget {
  writeHead(status: number, headers: [string, string][]): void;
  write(chunk: Buffer): void;
  end(trailers?: [string, string][]): void;
  /** Cut the response (headers already sent) or answer an error status (not yet). */
  fail(status: number, message: string): void;
  /** An ImmediateResponse to the response headers. */
  immediate(answer: Extract<PickerAnswer, { kind: 'immediate' }>): void;
}

/** The upstream response's events, fed by the hop. */
export interface ResponseFeed {
  chunk(c: Buffer): void;
  /** The upstream body ended, with its trailers (empty: none). */
  end(trailers: [string, string][]): void;
  /** The client went away or the upstream broke: stop talking to the picker. */
  abort(): void;
}

type Phase = 'request' | 'between' | 'headers' | 'body' | 'done';
const EOS = Symbol('end of stream');

export class PickerStream {
  private phase: Phase = 'request';
  private modes: ResponseModes = DEFAULT_RESPONSE_MODES;
  private timer?: NodeJS.Timeout;
  private closed = false;
  // request phase
  private onReply?: (r: ProcessingResponse) => void;
  private onTrouble?: (error: Error | undefined) => void;

  constructor(
    private readonly call: grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>,
    private readonly timeoutMs: number,
  ) {
    call.on('data', (r: ProcessingResponse) => {
      if (r.mode_override && (this.phase === 'request' || this.phase === 'between')) this.modes = responseModes(r.mode_override);
      this.onReply?.(r);
    });
    call.on('error', (e: Error) => this.trouble(e));
    call.on('end', () => this.trouble(undefined));
  }

  private trouble(error: Error | undefined): void {
    this.disarm();
    this.closed = true;
    this.onTrouble?.(error);
  }

  private arm(what: string): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.call.cancel();
      this.trouble(new PickerError(`the endpoint picker did not answer ${what} within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
  }

  /** The exchange is over, ended or aborted: no timer, no handler left waiting for a reply. */
  private settle(): void {
    this.disarm();
    this.phase = 'done';
    this.onReply = undefined;
    this.onTrouble = undefined;
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The request phase; rejects with PickerError when the picker fails or names nothing usable. */
  request(headers: [string, string][], body: Buffer): Promise<PickerAnswer> {
    return new Promise<PickerAnswer>((resolve, reject) => {
      let settled = false;
      const set: [string, string][] = [];
      const remove: string[] = [];
      const hasBody = body.length > 0;
      let route: Extract<PickerAnswer, { kind: 'route' }> | undefined;
      // The reply to the body phase: only awaited when a body was sent.
      let bodyDone = !hasBody;
      let newBody: Buffer | undefined;
      const streamed: Buffer[] = [];
      const finish = (answer?: PickerAnswer, error?: Error) => {
        if (settled) return;
        settled = true;
        this.disarm();
        this.onReply = undefined;
        this.onTrouble = undefined;
        this.phase = 'between';
        if (answer) resolve(answer);
        else reject(error ?? new PickerError('the endpoint picker chose no endpoint'));
      };
      // The stream ended: a destination already named is followed even without a body reply.
      this.onTrouble = (e) =>
        route ? finish(newBody ? { ...route, body: newBody } : route) : finish(undefined, e ? (e instanceof PickerError ? e : new PickerError(`endpoint picker: ${e.message}`)) : undefined);
      this.onReply = (r) => {
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
      };
      if (this.closed) {
        finish(undefined, new PickerError('endpoint picker: the stream closed'));
        return;
      }
      this.arm('the request');
      this.call.write({ request_headers: { headers: toHeaderMap(headers), end_of_stream: !hasBody } });
      if (hasBody) this.call.write({ request_body: { body, end_of_stream: true } });
    });
  }

  /** After request(): whether the picker takes part in the response (it did not turn it off, and the stream is open). */
  wantsResponse(): boolean {
    return !this.closed && (this.modes.headers || this.modes.body || this.modes.trailers);
  }

  /** Ends the stream (half-close) when no response phase follows: the hop calls it once the response has ended, so the picker knows the request is no longer in flight. */
  close(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.disarm();
    if (!this.closed) this.call.end();
  }

  /**
   * The response phase: call once the upstream's status and headers are in (`noBody`: a HEAD,
   * 204 or 304 answer, or a Content-Length of 0); the returned feed takes the body.
   */
  respond(status: number, headers: [string, string][], noBody: boolean, served: string, failOpen: boolean, target: ResponseTarget, protectedNames: Set<string>): ResponseFeed {
    const modes = this.modes;
    // A body that goes through the picker may change length: the client gets it chunked.
    const framed = (h: [string, string][]) => (modes.body && !noBody ? h.filter(([k]) => k !== 'content-length') : h);
    let detached = false; // the picker is out of the loop: everything passes through
    let headersOut = false;
    let owned = false; // the picker sends the body itself (streamed_response)
    const pending: (Buffer | typeof EOS)[] = []; // chunks sent whose fate the picker has not told
    const early: Buffer[] = []; // chunks that came while the headers reply was awaited
    let upstreamEnded = false;
    let earlyEnd: [string, string][] | undefined;
    let bodyDone = false;
    let trailersAwaited = false;
    let trailers: [string, string][] = [];
    let finished = false;

    const finish = () => {
      if (finished) return;
      finished = true;
      this.settle();
      if (!this.closed) this.call.end();
      target.end(trailers);
    };
    const maybeFinish = () => {
      if (headersOut && bodyDone && !trailersAwaited) finish();
    };
    // Waiting on the picker (timed): for the headers reply, the trailers reply, and once the
    // upstream ended, the rest of the body. Not for each chunk mid-stream: a full-duplex picker
    // may hold a non-streamed body until its end.
    const outstanding = () => !headersOut || trailersAwaited || (upstreamEnded && !bodyDone);
    const rearm = () => (outstanding() && !detached ? this.arm('the response') : this.disarm());

    /** Out of the loop (a clean close, or FailOpen): what is held goes out unchanged. */
    const detach = (error: Error | undefined) => {
      if (finished || detached) return;
      detached = true;
      this.disarm();
      const failing = error !== undefined && !failOpen;
      if (failing || owned) {
        finished = true;
        target.fail(502, `the endpoint picker failed during the response: ${error?.message ?? 'it closed the stream while sending the body'}`);
        return;
      }
      if (!headersOut) {
        headersOut = true;
        target.writeHead(status, headers);
        for (const c of early) target.write(c);
        early.length = 0;
      }
      for (const c of pending) if (c !== EOS) target.write(c);
      pending.length = 0;
      if (upstreamEnded) {
        finished = true;
        target.end(trailers);
      }
    };
    this.onTrouble = (e) => detach(e ?? undefined);
    if (this.closed) detach(undefined);

    const sendChunk = (c: Buffer) => {
      if (!modes.body) {
        target.write(c);
        return;
      }
      this.call.write({ response_body: { body: c, end_of_stream: false } });
      if (!owned) pending.push(c);
      rearm();
    };
    const sendEnd = () => {
      if (modes.trailers && trailers.length > 0) {
        trailersAwaited = true;
        this.call.write({ response_trailers: { trailers: toHeaderMap(trailers) } });
      } else if (modes.body && !noBody) {
        this.call.write({ response_body: { body: Buffer.alloc(0), end_of_stream: true } });
        if (!owned) pending.push(EOS);
      }
      if (!modes.body || noBody) bodyDone = true;
      rearm();
      maybeFinish();
    };

    this.onReply = (r) => {
      if (finished || detached) return;
      if (r.immediate_response && !headersOut) {
        finished = true;
        this.disarm();
        this.phase = 'done';
        this.call.end();
        const ir = r.immediate_response;
        const h: [string, string][] = [];
        mutationHeaders(ir.headers, h, []);
        target.immediate({ kind: 'immediate', status: ir.status?.code || 500, headers: h, body: ir.body ? Buffer.from(ir.body) : Buffer.alloc(0) });
        return;
      }
      if (r.immediate_response) {
        detach(new PickerError('the picker answered an ImmediateResponse after the response headers were sent'));
        return;
      }
      if (r.response_headers && !headersOut) {
        const set: [string, string][] = [];
        const remove: string[] = [];
        mutationHeaders(r.response_headers.response?.header_mutation, set, remove);
        headersOut = true;
        target.writeHead(status, framed(applyMutation(headers, set, remove, protectedNames)));
        this.phase = 'body';
        const held = early.splice(0);
        for (const c of held) sendChunk(c);
        if (noBody) bodyDone = true;
        if (earlyEnd) sendEnd();
      } else if (r.response_body) {
        const m = r.response_body.response?.body_mutation;
        if (m?.streamed_response) {
          owned = true;
          pending.length = 0;
          if (m.streamed_response.body && m.streamed_response.body.length > 0) target.write(Buffer.from(m.streamed_response.body));
          if (m.streamed_response.end_of_stream) bodyDone = true;
        } else {
          const c = pending.shift();
          if (c === EOS) bodyDone = true;
          const out = m?.body ? Buffer.from(m.body) : m?.clear_body ? undefined : c === EOS ? undefined : c;
          if (out && out.length > 0) target.write(out);
        }
      } else if (r.response_trailers) {
        const set: [string, string][] = [];
        const remove: string[] = [];
        mutationHeaders(r.response_trailers.header_mutation, set, remove);
        trailers = applyMutation(trailers, set, remove, new Set());
        trailersAwaited = false;
        // Body replies come before the trailers' (the protocol's order): nothing more to release.
        for (const c of pending.splice(0)) if (c !== EOS) target.write(c);
        bodyDone = true;
      }
      rearm();
      maybeFinish();
    };

    if (modes.headers) {
      const h: [string, string][] = [[':status', String(status)], ...headers];
      this.phase = 'headers';
      this.call.write({
        response_headers: { headers: toHeaderMap(h), end_of_stream: noBody },
        metadata_context: { filter_metadata: { [LB_METADATA_NAMESPACE]: { fields: { [SERVED_ENDPOINT_KEY]: { stringValue: served } } } } },
      });
      rearm();
    } else {
      headersOut = true;
      this.phase = 'body';
      target.writeHead(status, framed(headers));
      if (noBody) bodyDone = true;
    }

    return {
      chunk: (c) => {
        if (finished) return;
        if (detached) target.write(c);
        else if (!headersOut) early.push(c);
        else sendChunk(c);
      },
      end: (t) => {
        if (finished) return;
        upstreamEnded = true;
        trailers = t;
        if (detached) {
          finished = true;
          target.end(trailers);
        } else if (!headersOut) earlyEnd = t;
        else sendEnd();
      },
      abort: () => {
        if (finished) return;
        finished = true;
        this.settle();
        if (!this.closed) this.call.cancel();
      },
    };
  }
}
