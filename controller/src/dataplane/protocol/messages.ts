/**
 * The config channel between the controller (configserver/) and portcullis-agent (agent/),
 * over HTTPS with the agent's ServiceAccount token as a bearer token.
 *
 *   GET  /v1/config?gateway=NS/NAME&pod=POD&prefix=DIR&listen=ADDR&have=VERSION&delta=1
 *        200, application/x-ndjson: one ConfigFrame per line, for as long as the agent stays
 *        connected: the current config at once (or `current` when `have` is it), then every
 *        new version as soon as it exists, and a ping every PING_INTERVAL_MS. With `delta=1`
 *        (the agent understands them), a new version after a config frame on the same stream
 *        comes as a `delta` frame: the changed lines only.
 *   POST /v1/status   body ApplyReport -> 204
 *
 * Errors answer a JSON body {message}: 400 bad query, 401 no or bad token, 403 the token's
 * ServiceAccount is not the Gateway's, 404 the Gateway is not (yet) one of ours, 503 this
 * controller replica is not the leader (Retry-After: 1).
 *
 * A version is a hash of the rendered files, so it is the same on every controller replica
 * and across restarts: an agent that already serves it is not sent it again.
 */
import type { HeldPort } from '../../apply/ports';
import type { FilesDelta } from './delta';

export const CONFIG_PATH = '/v1/config';
export const STATUS_PATH = '/v1/status';
export const PING_INTERVAL_MS = 10000;
/** An agent that hears nothing for this long reconnects. */
export const SILENCE_TIMEOUT_MS = 3 * PING_INTERVAL_MS;

export type ConfigFrame =
  | { type: 'config'; version: string; files: Record<string, string> }
  /** The config `version` as line edits of `base`, the config frame before it on this stream (delta.ts). */
  | { type: 'delta'; version: string; base: string; files: FilesDelta }
  | { type: 'current'; version: string }
  | { type: 'ping' };

export interface ApplyReport {
  gateway: string;
  pod: string;
  version: string;
  ok: boolean;
  /** nginx's message when ok is false. */
  message?: string;
  /**
   * Ports its nginx could not listen on because another process holds them (apply/ports.ts
   * HeldPorts), in every report until a bind finds them free: the controller leaves the
   * Gateway's listeners on them out (PortUnavailable) so the rest is served. Absent: none.
   */
  heldPorts?: HeldPort[];
}

/** How the agent's nginx is laid out: the controller renders the config for it. */
export interface RenderVariant {
  prefix: string;
  listenAddress: string;
}
