/**
 * The user's SSH key endpoints and HTTP-signature authentication (draft-cavage), with keys and
 * certificates made by the real ssh-keygen, on SQLite and PostgreSQL.
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sshpk from 'sshpk';
import { describeForge, PASSWORD } from './support/forge';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsig-'));
const keygen = (...args: string[]) => execFileSync('ssh-keygen', ['-q', ...args], { cwd: dir, stdio: 'pipe' });
keygen('-t', 'ed25519', '-N', '', '-C', 'alice@laptop', '-f', 'ed');
keygen('-t', 'rsa', '-b', '2048', '-N', '', '-f', 'rsa');
keygen('-t', 'ed25519', '-N', '', '-f', 'other');
keygen('-t', 'ed25519', '-N', '', '-f', 'ca');
keygen('-t', 'ed25519', '-N', '', '-f', 'rogue');
keygen('-t', 'ed25519', '-N', '', '-f', 'certkey');
keygen('-s', 'ca', '-I', 'valid', '-n', 'alice-principal', '-V', '-5m:+1h', 'certkey.pub');
fs.renameSync(path.join(dir, 'certkey-cert.pub'), path.join(dir, 'valid-cert.pub'));
keygen('-s', 'ca', '-I', 'expired', '-n', 'alice-principal', '-V', '20200101:20200102', 'certkey.pub');
fs.renameSync(path.join(dir, 'certkey-cert.pub'), path.join(dir, 'expired-cert.pub'));
keygen('-s', 'rogue', '-I', 'rogue', '-n', 'alice-principal', '-V', '-5m:+1h', 'certkey.pub');
fs.renameSync(path.join(dir, 'certkey-cert.pub'), path.join(dir, 'rogue-cert.pub'));
keygen('-s', 'ca', '-I', 'stranger', '-n', 'nobody-principal', '-V', '-5m:+1h', 'certkey.pub');
fs.renameSync(path.join(dir, 'certkey-cert.pub'), path.join(dir, 'stranger-cert.pub'));
// A certified ed25519 key whose public bytes start with 0x00 (1 key in 256): sshpk drops that
// byte when it parses a certificate, which once made such certificates fail to verify.
for (let i = 0; i < 5000; i++) {
  keygen('-t', 'ed25519', '-N', '', '-f', 'zerokey');
  const raw = Buffer.from(fs.readFileSync(path.join(dir, 'zerokey.pub'), 'utf8').split(' ')[1], 'base64');
  if (raw[raw.length - 32] === 0) break;
  fs.rmSync(path.join(dir, 'zerokey'));
  fs.rmSync(path.join(dir, 'zerokey.pub'));
}
keygen('-s', 'ca', '-I', 'zero', '-n', 'alice-principal', '-V', '-5m:+1h', 'zerokey.pub');

const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').trim();
const fingerprintOf = (pub: string) => execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', path.join(dir, pub)]).toString().split(' ')[1];
/** An OpenSSH private key file as a Node key (ed25519 through JWK: OpenSSL rejects sshpk's PKCS#8 of it). */
function privateKey(f: string): crypto.KeyObject {
  const k = sshpk.parsePrivateKey(fs.readFileSync(path.join(dir, f)), 'ssh');
  if (k.type !== 'ed25519') return crypto.createPrivateKey(k.toString('pkcs8'));
  const part = k.part as unknown as Record<string, { data: Buffer }>;
  // sshpk may drop leading zero bytes of the 32-byte values: pad them back.
  const pad = (b: Buffer) => (b.length >= 32 ? b.subarray(0, 32) : Buffer.concat([Buffer.alloc(32 - b.length), b]));
  const jwk = { kty: 'OKP', crv: 'Ed25519', d: pad(part.k.data).toString('base64url'), x: pad(part.A.data).toString('base64url') };
  return crypto.createPrivateKey({ key: jwk, format: 'jwk' });
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface SignOpts {
  keyId: string;
  key: string;
  method?: string;
  path: string;
  cert?: string;
  expires?: number;
  created?: number;
  /** Sign this path instead of the one requested (a signature that does not match). */
  signPath?: string;
  tamper?: boolean;
}

/** Signs like go-sdk: (request-target) (created) (expires), SSH key type decides the algorithm. */
function signedHeaders(o: SignOpts): Record<string, string> {
  const now = Math.floor(Date.now() / 1000);
  const created = o.created ?? now;
  const expires = o.expires ?? now + 10;
  const target = `${(o.method ?? 'GET').toLowerCase()} ${o.signPath ?? o.path}`;
  const lines = [`(request-target): ${target}`, `(created): ${created}`, `(expires): ${expires}`];
  const headers: Record<string, string> = {};
  if (o.cert) {
    headers['x-ssh-certificate'] = read(o.cert).split(' ')[1];
    lines.push(`x-ssh-certificate: ${headers['x-ssh-certificate']}`);
  }
  const pk = privateKey(o.key);
  const data = Buffer.from(lines.join('\n'));
  const sig = pk.asymmetricKeyType === 'ed25519' ? crypto.sign(null, data, pk) : crypto.sign('sha512', data, pk);
  if (o.tamper) sig[0] ^= 0xff;
  const names = `(request-target) (created) (expires)${o.cert ? ' x-ssh-certificate' : ''}`;
  headers.signature = `keyId="${o.keyId}",algorithm="hs2019",created=${created},expires=${expires},headers="${names}",signature="${sig.toString('base64')}"`;
  return headers;
}

describeForge(
  'SSH keys and HTTP signatures',
  (f) => {
    const as = (name: string) => ({ basic: [name, PASSWORD] as [string, string] });
    let edId: number;

    beforeAll(async () => {
      await f().user('root', { admin: true });
      await f().user('alice');
      await f().user('bob');
    });

    test('add keys: fingerprint as ssh-keygen computes it, key_type, read_only, uniqueness', async () => {
      let res = await f().request('POST', '/user/keys', { ...as('alice'), body: { key: read('ed.pub'), title: 'laptop' } });
      expect(res.status).toBe(201);
      edId = res.body.id;
      expect(res.body).toMatchObject({ title: 'laptop', fingerprint: fingerprintOf('ed.pub'), key_type: 'user', url: `${f().url}/api/v1/user/keys/${edId}` });
      // Gitea omits read_only (omitempty) on a key that is not read-only.
      expect(res.body).not.toHaveProperty('read_only');
      expect(res.body.key.startsWith('ssh-ed25519 ')).toBe(true);
      expect(res.body.user.login).toBe('alice');
      res = await f().request('POST', '/user/keys', { ...as('alice'), body: { key: read('rsa.pub'), title: 'ci', read_only: true } });
      expect(res.status).toBe(201);
      // A user's key has no read-only mode in Gitea 1.27: the option is ignored and never shown.
      expect(res.body).toMatchObject({ fingerprint: fingerprintOf('rsa.pub') });
      expect(res.body).not.toHaveProperty('read_only');
      // Same title, same key (even for another user), garbage: 422.
      expect((await f().request('POST', '/user/keys', { ...as('alice'), body: { key: read('other.pub'), title: 'laptop' } })).status).toBe(422);
      expect((await f().request('POST', '/user/keys', { ...as('bob'), body: { key: read('ed.pub'), title: 'stolen' } })).status).toBe(422);
      expect((await f().request('POST', '/user/keys', { ...as('bob'), body: { key: 'ssh-ed25519 AAAAnotakey', title: 'bad' } })).status).toBe(422);
      expect((await f().request('POST', '/user/keys', { ...as('bob'), body: { title: 'nokey' } })).status).toBe(422);
      expect((await f().request('POST', '/user/keys', { body: { key: read('other.pub'), title: 'anon' } })).status).toBe(401);
    });

    test('list, filter by fingerprint, get, delete: only the owner', async () => {
      let res = await f().request('GET', '/user/keys', as('alice'));
      expect(res.status).toBe(200);
      expect(res.body.map((k: { title: string }) => k.title)).toEqual(['laptop', 'ci']);
      expect(res.headers.get('x-total-count')).toBe('2');
      res = await f().request('GET', `/user/keys?fingerprint=${encodeURIComponent(fingerprintOf('rsa.pub'))}`, as('alice'));
      expect(res.body.map((k: { title: string }) => k.title)).toEqual(['ci']);
      // Gitea 1.27 lists a user's keys to signed-in callers only (anonymous: 401).
      expect((await f().request('GET', '/users/alice/keys')).status).toBe(401);
      res = await f().request('GET', '/users/alice/keys', as('bob'));
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(2);
      expect((await f().request('GET', `/user/keys/${edId}`, as('alice'))).body.title).toBe('laptop');
      expect((await f().request('GET', `/user/keys/${edId}`, as('bob'))).status).toBe(404);
      expect((await f().request('DELETE', `/user/keys/${edId}`, as('bob'))).status).toBe(403);
      const tmp = await f().request('POST', '/user/keys', { ...as('bob'), body: { key: read('other.pub'), title: 'tmp' } });
      expect((await f().request('DELETE', `/user/keys/${tmp.body.id}`, as('bob'))).status).toBe(204);
      expect((await f().request('DELETE', `/user/keys/${tmp.body.id}`, as('bob'))).status).toBe(404);
      // Admin route: add and delete a key on behalf of a user.
      const added = await f().request('POST', '/admin/users/bob/keys', { ...as('root'), body: { key: read('other.pub'), title: 'by-admin' } });
      expect(added.status).toBe(201);
      expect((await f().request('DELETE', `/admin/users/alice/keys/${added.body.id}`, as('root'))).status).toBe(403);
      expect((await f().request('DELETE', `/admin/users/bob/keys/${added.body.id}`, as('root'))).status).toBe(204);
    });

    test('a request signed with a registered ed25519 or RSA key authenticates as its owner', async () => {
      let res = await f().request('GET', '/user', { headers: signedHeaders({ keyId: fingerprintOf('ed.pub'), key: 'ed', path: '/api/v1/user' }) });
      expect(res.status).toBe(200);
      expect(res.body.login).toBe('alice');
      res = await f().request('GET', '/user/keys?limit=1', { headers: signedHeaders({ keyId: fingerprintOf('rsa.pub'), key: 'rsa', path: '/api/v1/user/keys?limit=1' }) });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      // Signed requests are unscoped (like a token without scopes in Gitea) but keep the user's rights.
      res = await f().request('GET', '/admin/users', { headers: signedHeaders({ keyId: fingerprintOf('ed.pub'), key: 'ed', path: '/api/v1/admin/users' }) });
      expect(res.status).toBe(403);
    });

    test('wrong signature, unknown key, other path, expired signature: 401', async () => {
      const base = { keyId: fingerprintOf('ed.pub'), key: 'ed', path: '/api/v1/user' };
      for (const o of [
        { ...base, tamper: true },
        { ...base, key: 'other' },
        { ...base, keyId: fingerprintOf('other.pub'), key: 'other' },
        { ...base, keyId: 'SHA256:unknown' },
        { ...base, signPath: '/api/v1/users/alice' },
        { ...base, created: Math.floor(Date.now() / 1000) - 600, expires: Math.floor(Date.now() / 1000) - 590 },
      ]) {
        const res = await f().request('GET', '/user', { headers: signedHeaders(o) });
        expect(res.status).toBe(401);
      }
      const res = await f().request('GET', '/user', { headers: { signature: 'garbage' } });
      expect(res.status).toBe(401);
      // A public route with a bad signature is refused too (credentials that do not verify).
      expect((await f().request('GET', '/version', { headers: signedHeaders({ ...base, tamper: true, path: '/api/v1/version' }) })).status).toBe(401);
    });

    test('SSH certificates: a trusted, valid certificate whose principal is registered', async () => {
      const alice = await f().app.services.users.findByName('alice');
      await f().app.services.keys.addPrincipal(alice!, 'alice-principal');
      const p = '/api/v1/user';
      let res = await f().request('GET', '/user', { headers: signedHeaders({ keyId: 'gitea', key: 'certkey', path: p, cert: 'valid-cert.pub' }) });
      expect(res.status).toBe(200);
      expect(res.body.login).toBe('alice');
      res = await f().request('GET', '/user', { headers: signedHeaders({ keyId: 'gitea', key: 'zerokey', path: p, cert: 'zerokey-cert.pub' }) });
      expect(res.status).toBe(200);
      // Principals are not listed as keys.
      expect((await f().request('GET', '/users/alice/keys', as('bob'))).body).toHaveLength(2);
      for (const cert of ['expired-cert.pub', 'rogue-cert.pub', 'stranger-cert.pub']) {
        res = await f().request('GET', '/user', { headers: signedHeaders({ keyId: 'gitea', key: 'certkey', path: p, cert }) });
        expect(res.status).toBe(401);
      }
      // Signed with a key other than the certified one.
      res = await f().request('GET', '/user', { headers: signedHeaders({ keyId: 'gitea', key: 'other', path: p, cert: 'valid-cert.pub' }) });
      expect(res.status).toBe(401);
      // A plain public key is not a certificate.
      const headers = signedHeaders({ keyId: 'gitea', key: 'ed', path: p, cert: 'valid-cert.pub' });
      headers['x-ssh-certificate'] = read('ed.pub').split(' ')[1];
      expect((await f().request('GET', '/user', { headers })).status).toBe(401);
    });
  },
  { sshTrustedUserCaKeys: [read('ca.pub')] },
);
