import { buildApp } from '../forge-api/src/app';
async function main() {
  const databaseUrl = process.env.DB_URL ?? 'file:/tmp/reads/data/forge.db';
  const app = await buildApp({ config: { dataDir: '/tmp/reads/data', databaseUrl, rootUrl: 'http://127.0.0.1:3000/', port: 3000 } });
  await app.ready();
  const u = process.env.U ?? '/api/v1/repos/search?limit=50';
  const n = Number(process.env.N ?? 300);
  for (let i = 0; i < 50; i++) await app.inject({ method: 'GET', url: u });
  const c0 = process.cpuUsage(); const t = process.hrtime.bigint();
  let len = 0;
  for (let i = 0; i < n; i++) { const r = await app.inject({ method: 'GET', url: u }); len = r.body.length; }
  const c = process.cpuUsage(c0);
  console.log(u, 'wall', (Number(process.hrtime.bigint() - t) / 1e6 / n).toFixed(2), 'ms/req; cpu', ((c.user + c.system) / 1000 / n).toFixed(2), 'ms/req; bytes', len);
  await app.close();
}
main();
