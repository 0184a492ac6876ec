/**
 * PostgreSQL closing the forge's connections (a server restart, a failover, an administrator's
 * pg_terminate_backend) costs nothing but new connections: the forge keeps answering and its
 * process does not die. Idle pooled connections that the server ends emit an error event; with
 * no listener for it Node ends the whole process.
 */
import { Client } from 'pg';
import { providers, startForge, type Forge } from './support/forge';

const pg = providers().includes('postgresql');
(pg ? describe : describe.skip)('the PostgreSQL server ends the forge connections', () => {
  let forge: Forge;
  let token: string;

  beforeAll(async () => {
    forge = await startForge('postgresql');
    await forge.user('alice');
    token = await forge.token('alice', ['write:user', 'write:repository']);
    expect((await forge.request('POST', '/user/repos', { token, body: { name: 'kept' } })).status).toBe(201);
  });
  afterAll(async () => {
    await forge?.close();
  });

  async function terminateAll(): Promise<number> {
    const database = new URL(forge.app.config.databaseUrl).pathname.slice(1);
    const admin = new Client({ connectionString: process.env.PG_TEST_URL });
    await admin.connect();
    try {
      const r = await admin.query('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      return r.rowCount ?? 0;
    } finally {
      await admin.end();
    }
  }

  test('reads and searches answer again after every connection was terminated, twice', async () => {
    const made: string[] = [];
    for (let round = 0; round < 2; round++) {
      // Both the Prisma pool and the prepared-statement pool hold idle connections now.
      expect((await forge.request('GET', '/repos/search?limit=50')).status).toBe(200);
      expect((await forge.request('GET', '/repos/alice/kept')).status).toBe(200);
      expect(await terminateAll()).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 300)); // the idle connections see their end
      const search = await forge.request('GET', '/repos/search?limit=50');
      expect(search.status).toBe(200);
      expect(search.body.data.map((r: { full_name: string }) => r.full_name).sort()).toEqual(['alice/kept', ...made].sort());
      expect((await forge.request('GET', '/repos/alice/kept')).status).toBe(200);
      // A write through Prisma's own pool.
      expect((await forge.request('POST', '/user/repos', { token, body: { name: `more-${round}` } })).status).toBe(201);
      made.push(`alice/more-${round}`);
    }
  });
});
