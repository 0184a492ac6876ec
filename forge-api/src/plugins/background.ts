/** The background work of the forge (webhook deliveries, scheduled tasks) runs while the server does. */
import type { FastifyInstance } from 'fastify';
import { shared } from './shared';

const HOUSEKEEPING_SWEEP_DELAY_MS = 5000;

async function backgroundPlugin(app: FastifyInstance) {
  const { deliveries, cron, gitHousekeeping } = app.services;
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    deliveries.start();
    await cron.start();
    // Repositories a restart left un-housekept (services/git/housekeeping.ts), once the server
    // has settled in rather than during its start.
    sweep = setTimeout(() => {
      gitHousekeeping.sweep(app.config.reposDir).catch((err) => app.log.error({ err }, 'git housekeeping sweep failed'));
    }, HOUSEKEEPING_SWEEP_DELAY_MS);
    sweep.unref();
  });
  app.addHook('onClose', async () => {
    clearTimeout(sweep);
    await cron.stop();
    await deliveries.stop();
  });
}

export default shared(backgroundPlugin);
