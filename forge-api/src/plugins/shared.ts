import type { FastifyPluginAsync } from 'fastify';

/**
 * Marks a plugin so its decorators and hooks apply to the parent scope (what fastify-plugin
 * does, without the dependency: Fastify honours this symbol itself).
 */
export function shared<T extends FastifyPluginAsync<any>>(plugin: T): T {
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}
