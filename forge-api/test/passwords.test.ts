/**
 * Password hashes as Gitea's [security] PASSWORD_HASH_ALGO makes them: the default pbkdf2
 * (pbkdf2$50000$50), every other setting, hashes of an older setting still verifying and
 * replaced at the next login, and a setting that names no algorithm refused at startup.
 */
import { loadConfig } from '../src/config';
import { PasswordHasher } from '../src/services/passwords';
import { PASSWORD, startForge, type Forge } from './support/forge';

const basic = (user: string, pass: string) => ({ basic: [user, pass] as [string, string] });

describe('password hashes', () => {
  test('each setting hashes, verifies the right password only, and salts every hash', async () => {
    for (const setting of ['pbkdf2', 'pbkdf2_v1', 'pbkdf2$2000$32', 'scrypt$1024$8$1$50', 'bcrypt$4']) {
      const h = new PasswordHasher(setting);
      const a = await h.hash('correct horse');
      const b = await h.hash('correct horse');
      expect(a).not.toBe(b);
      expect(await h.verify('correct horse', a)).toBe(true);
      expect(await h.verify('correct horsf', a)).toBe(false);
      expect(h.isCurrent(a)).toBe(true);
    }
    const def = new PasswordHasher();
    expect(def.setting).toBe('pbkdf2$50000$50');
    expect(await def.hash('x')).toMatch(/^pbkdf2\$50000\$50\$[0-9a-f]{32}\$[0-9a-f]{100}$/);
  });

  test('a hash of another setting verifies but is not current; broken stored values never verify', async () => {
    const old = await new PasswordHasher('bcrypt$4').hash('pw');
    const now = new PasswordHasher('pbkdf2');
    expect(await now.verify('pw', old)).toBe(true);
    expect(now.isCurrent(old)).toBe(false);
    expect(now.isCurrent(await new PasswordHasher('pbkdf2_v1').hash('pw'))).toBe(false);
    for (const stored of ['', 'pbkdf2$50000$50', 'pbkdf2$x$50$salt$00', 'md5$salt$00', 'pbkdf2$1000$50$salt$zz']) {
      expect(await now.verify('pw', stored)).toBe(false);
    }
  });

  test('PASSWORD_HASH_ALGO that names no algorithm stops the start with a clear error', () => {
    expect(() => loadConfig({ passwordHashAlgo: 'argon3' })).toThrow(/PASSWORD_HASH_ALGO: unknown or malformed "argon3"/);
    expect(() => loadConfig({ passwordHashAlgo: 'pbkdf2$0$50' })).toThrow(/PASSWORD_HASH_ALGO/);
    expect(loadConfig({ passwordHashAlgo: 'pbkdf2_hi' }).passwordHashAlgo).toBe('pbkdf2$320000$50');
  });

  describe('on a forge', () => {
    let forge: Forge;
    afterEach(async () => forge?.close());

    test('the default setting: a new user logs in with basic auth; the stored hash is pbkdf2$50000$50', async () => {
      forge = await startForge('sqlite', { passwordHashAlgo: 'pbkdf2' });
      await forge.user('dora');
      expect((await forge.request('GET', '/user', basic('dora', PASSWORD))).body.login).toBe('dora');
      expect((await forge.request('GET', '/user', basic('dora', 'wrong-password'))).status).toBe(401);
      const row = await forge.app.prisma.user.findFirstOrThrow({ where: { name: 'dora' } });
      expect(row.passwordHash).toMatch(/^pbkdf2\$50000\$50\$/);
    });

    test('after the setting changes, the old hash still logs in and is replaced by one of the new setting', async () => {
      forge = await startForge('sqlite', { passwordHashAlgo: 'bcrypt$4' });
      await forge.user('ernst');
      const before = (await forge.app.prisma.user.findFirstOrThrow({ where: { name: 'ernst' } })).passwordHash;
      expect(before).toMatch(/^\$2[aby]\$04\$/);
      // The same database under a forge with the new setting.
      const next = await startForge('sqlite', { passwordHashAlgo: 'pbkdf2$1000$50', dataDir: forge.dataDir, databaseUrl: forge.app.config.databaseUrl });
      try {
        expect((await next.request('GET', '/user', basic('ernst', PASSWORD))).status).toBe(200);
        const after = (await next.app.prisma.user.findFirstOrThrow({ where: { name: 'ernst' } })).passwordHash;
        expect(after).toMatch(/^pbkdf2\$1000\$50\$/);
        expect((await next.request('GET', '/user', basic('ernst', PASSWORD))).status).toBe(200);
        expect((await next.request('GET', '/user', basic('ernst', 'not-it'))).status).toBe(401);
      } finally {
        await next.app.close();
      }
    });
  });
});
