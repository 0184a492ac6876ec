/**
 * Held ports (apply/ports.ts HeldPorts, kept where nginx runs) as the graph reads them: one
 * UnavailablePort per held transport, so its listeners get PortUnavailable and are left out.
 * The one rule of both data planes: standalone's nginx serves every Gateway on one address, so
 * its ports concern them all; an agent's nginx serves its own Gateway only.
 */
import type { HeldPort } from '../apply/ports';
import type { UnavailablePort } from '../graph/types';

export function unavailableListenerPorts(held: readonly HeldPort[], agent?: { gateway: string; pod: string }): UnavailablePort[] {
  const out: UnavailablePort[] = [];
  for (const h of held) {
    const where = agent ? `the nginx of ${agent.pod}` : 'nginx';
    const reason = `${where} could not listen on ${h.address}:${h.port} (${h.error})`;
    for (const transport of h.transports) out.push({ port: h.port, transport, reason, ...(agent ? { gateway: agent.gateway } : {}) });
  }
  return out;
}
