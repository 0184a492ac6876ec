/** Starts the forge: migrations, then listen on FORGE_PORT. */
import { buildApp } from './app';
import { loadConfig, type ForgeConfigInput } from './config';

export async function startServer(overrides: ForgeConfigInput = {}) {
  const config = loadConfig(overrides);
  const app = await buildApp({ config: overrides, logger: { level: process.env.LOG_LEVEL ?? 'info' } });
  await app.listen({ port: config.port, host: config.host });
  const close = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return app;
}
