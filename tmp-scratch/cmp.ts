// usage: ROOT=/work/main tsx cmp.ts out.json — runs many searches against a copy of /tmp/reads/cmp.db
import fs from 'node:fs';
import crypto from 'node:crypto';
async function main() {
  const root = process.env.ROOT!;
  const { buildApp } = await import(`${root}/forge-api/src/app`);
  const dir = fs.mkdtempSync('/tmp/reads/cmp-');
  fs.copyFileSync('/tmp/reads/cmp.db', `${dir}/forge.db`);
  const app = await buildApp({ config: { dataDir: dir, databaseUrl: `file:${dir}/forge.db`, rootUrl: 'http://127.0.0.1:3000/', port: 3000 } });
  await app.ready();
  const basic = (u: string) => `Basic ${Buffer.from(`${u}:portcullis-root-1`).toString('base64')}`;
  const tok = await app.inject({ method: 'POST', url: '/api/v1/users/owner5/tokens', headers: { authorization: basic('owner5'), 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'po', scopes: ['public-only', 'read:repository'] }) });
  const po = `token ${JSON.parse(tok.body).sha1}`;
  const who: Record<string, string | undefined> = { anon: undefined, root: basic('root'), owner5: basic('owner5'), owner7: basic('owner7'), owner2: basic('owner2'), po };
  const qs = ['limit=50', 'limit=7&page=3', 'limit=50&page=200', 'sort=updated&order=desc', 'sort=created', 'sort=size&order=desc&limit=20', 'sort=stars&order=desc', 'sort=forks', 'sort=id&order=desc', 'sort=git_size', 'mode=fork', 'mode=source', 'mode=mirror', 'mode=collaborative', 'template=true', 'template=false&archived=true', 'archived=false', 'is_private=true', 'is_private=false', 'private=false', 'private=true&is_private=true&limit=50', 'exclusive=true', 'limit=1', 'sort=alpha&order=desc&limit=13&page=2'];
  const out: Record<string, unknown> = {};
  for (const [w, auth] of Object.entries(who)) for (const q of qs) {
    const r = await app.inject({ method: 'GET', url: `/api/v1/repos/search?${q}`, headers: auth ? { authorization: auth } : {} });
    out[`${w} ${q}`] = { status: r.statusCode, total: r.headers['x-total-count'], link: r.headers['link'], n: JSON.parse(r.body).data?.length, hash: crypto.createHash('sha1').update(r.body).digest('hex') };
  }
  fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1));
  await app.close();
  fs.rmSync(dir, { recursive: true });
}
main();
