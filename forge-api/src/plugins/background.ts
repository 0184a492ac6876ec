/** The background work of the forge (webhook deliveries, scheduled tasks) runs while the server does. */
import type { FastifyInstance } from 'fastify';
import { shared } from './shared';

async function backgroundPlugin(app: FastifyInstance) {
  const { deliveries, cron } = app.services;
  app.addHook('onReady', async () => {
    deliveries.start();
    await cron.start();
  });
  app.addHook('onClose', async () => {
    await cron.stop();
    await deliveries.stop();
  });
}

export default shared(backgroundPlugin);
