import { listenerFit } from './hostnames';
import type { Attachment } from './routes';
import type { GatewayNode, HTTPRouteNode, ListenerNode } from './types';

/** Route precedence order: oldest first, then namespace/name (Gateway API). */
export function routeOrder(a: { creationTimestamp: string; namespace: string; name: string }, b: typeof a): number {
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  const ka = `${a.namespace}/${a.name}`;
  const kb = `${b.namespace}/${b.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Apply accepted attachments to listeners. Listener isolation: a hostname goes only to the
 * most specific valid listener of the same Gateway and port that matches it, so a route on a
 * catch-all listener does not serve `a.example.com` when a `*.example.com` listener exists.
 * The route still counts in attachedRoutes of every listener it attached to.
 */
export function applyAttachments(attachments: Attachment[], gateways: GatewayNode[]): void {
  const perListener = new Map<ListenerNode, Map<HTTPRouteNode, string[] | 'any'>>();
  for (const a of attachments) {
    let routes = perListener.get(a.listener);
    if (!routes) perListener.set(a.listener, (routes = new Map()));
    const before = routes.get(a.route);
    if (a.hostnames.length === 0 || before === 'any') routes.set(a.route, 'any');
    else routes.set(a.route, [...new Set([...(before ?? []), ...a.hostnames])]);
  }
  const byGateway = new Map(gateways.map((g) => [`${g.namespace}/${g.name}`, g]));
  for (const [listener, routes] of perListener) {
    listener.attachedRoutes = routes.size;
    const gateway = byGateway.get(`${listener.gateway.namespace}/${listener.gateway.name}`);
    const siblings = (gateway?.listeners ?? []).filter((o) => o !== listener && o.valid && o.port === listener.port);
    const ordered = [...routes].sort((x, y) => routeOrder(x[0], y[0]));
    for (const [route, hostnames] of ordered) {
      if (hostnames === 'any') {
        listener.routes.push({ route, hostnames: [] });
        continue;
      }
      const kept = hostnames.filter((h) => !siblings.some((o) => listenerFit(o.hostname, h) > listenerFit(listener.hostname, h)));
      if (kept.length > 0) listener.routes.push({ route, hostnames: kept });
    }
  }
}
