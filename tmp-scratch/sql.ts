import { buildApp } from '../forge-api/src/app';
import { createPrisma, tunePrisma } from '../forge-api/src/services/database';
async function main() {
  const databaseUrl = process.env.DB_URL ?? 'file:/tmp/reads/data/forge.db';
  const log: string[] = [];
  const prisma = createPrisma(databaseUrl, { onStatement: (s) => void log.push(s) });
  await tunePrisma(prisma, databaseUrl);
  const app = await buildApp({ config: { dataDir: '/tmp/reads/data', databaseUrl, rootUrl: 'http://127.0.0.1:3000/', port: 3000 }, prisma });
  await app.ready();
  for (const u of (process.env.URLS ?? '/api/v1/repos/search?limit=50').split(' ')) {
    await app.inject({ method: 'GET', url: u });
    log.length = 0;
    const t = process.hrtime.bigint();
    const res = await app.inject({ method: 'GET', url: u });
    console.log(u, res.statusCode, res.headers['x-total-count'], Number(process.hrtime.bigint() - t) / 1e6, 'ms');
    console.log(log.join('\n---\n'));
  }
  await app.close();
}
main();
