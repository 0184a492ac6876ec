/**
 * What the agents of one Gateway reported, folded into its Programmed condition, and the ports
 * a report says its nginx finds held, read leniently (pure).
 *
 * Each connected agent's latest report counts. Any failure makes the Gateway Programmed
 * False (reason Invalid, nginx's message, naming the pod): that replica serves its last good
 * config, not the current one. Otherwise one success is enough for True. While a new version
 * is being applied the previous reports stand, so the condition does not flicker on every
 * change. With no agent connected it is Pending, except in the first moments after this
 * controller became the leader (agents are still reconnecting): then it is unknown, and the
 * status stage keeps what the Gateway says.
 */
import type { HeldPort } from '../apply/ports';

export interface AgentReport {
  pod: string;
  version: string;
  ok: boolean;
  message?: string;
}

export type DataplaneOutcome =
  | { programmed: true }
  | { programmed: false; reason: 'Invalid' | 'Pending'; message: string };

export const PENDING_MESSAGE = 'Waiting for a data plane (portcullis-agent) to connect and apply the configuration';

export function foldOutcome(reports: AgentReport[], agentsConnected: number, settling: boolean): DataplaneOutcome | undefined {
  const failed = reports.filter((r) => !r.ok).sort((a, b) => a.pod.localeCompare(b.pod));
  if (failed.length) {
    const message = failed.map((r) => `${r.pod}: ${r.message ?? 'apply failed'}`).join('; ');
    // The status stage puts this after "...a failure to reload nginx with the configuration: ".
    return { programmed: false, reason: 'Invalid', message };
  }
  if (reports.some((r) => r.ok)) return { programmed: true };
  if (settling) return undefined;
  if (agentsConnected > 0) return { programmed: false, reason: 'Pending', message: 'Waiting for the data plane to apply the configuration' };
  return { programmed: false, reason: 'Pending', message: PENDING_MESSAGE };
}

/** An agent's held ports as sent, read without trusting their shape (at most 64). */
export function readHeldPorts(raw: unknown): HeldPort[] {
  if (!Array.isArray(raw)) return [];
  const out: HeldPort[] = [];
  for (const h of raw.slice(0, 64)) {
    const { address, port, error, transports } = (h ?? {}) as Record<string, unknown>;
    if (typeof address !== 'string' || typeof error !== 'string' || !Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535 || !Array.isArray(transports)) continue;
    const ts = (['TCP', 'UDP'] as const).filter((t) => transports.includes(t));
    if (ts.length > 0) out.push({ address: address.slice(0, 64), port: port as number, error: error.slice(0, 200), transports: ts });
  }
  return out;
}
