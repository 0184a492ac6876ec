/**
 * In-process events between services of one app, keyed by its Prisma client (each app has its
 * own): lets caches drop entries when the data behind them changes.
 */
import { EventEmitter } from 'node:events';

export interface ForgeEvents {
  /** A user's row changed (edit, rename, delete): credentials caches must forget it. */
  userChanged: [userId: number];
}

const buses = new WeakMap<object, EventEmitter>();

export function eventsOf(prisma: object): EventEmitter {
  let bus = buses.get(prisma);
  if (!bus) {
    bus = new EventEmitter();
    bus.setMaxListeners(0);
    buses.set(prisma, bus);
  }
  return bus;
}

export function emitUserChanged(prisma: object, userId: number): void {
  eventsOf(prisma).emit('userChanged', userId);
}
