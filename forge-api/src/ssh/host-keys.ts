/**
 * The SSH server's host keys (Gitea's SSH_SERVER_HOST_KEYS): the configured files that exist
 * are used; when none does, an Ed25519 and an ECDSA key are generated beside the first
 * (OpenSSH private key format, 0600, with a `.pub` beside each) and kept for every later start,
 * so clients see the same host identity across restarts.
 *
 * Gitea also generates an RSA key. The forge does not: a 3072-bit RSA key took 2 to 19 s to
 * generate here on a busy 2-core machine (prime search), every OpenSSH client since 6.5 (2014)
 * takes Ed25519, and an RSA host key can still be listed in SSH_SERVER_HOST_KEYS.
 */
import fs from 'node:fs';
import path from 'node:path';
import { utils } from 'ssh2';

const GENERATED = ['ed25519', 'ecdsa'] as const;

function generateOnce(type: (typeof GENERATED)[number]): Promise<{ private: string; public: string }> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, keys: { private: string; public: string }) => (err ? reject(err) : resolve(keys));
    if (type === 'ecdsa') utils.generateKeyPair('ecdsa', { bits: 256 }, done);
    else utils.generateKeyPair('ed25519', done);
  });
}

/**
 * A key pair whose private half ssh2 reads back: about 1 in 200 Ed25519 keys ssh2 generates
 * fails its own parser ("Malformed OpenSSH private key"), and a host key that cannot be read
 * would stop every later start, so such a key is never written.
 */
async function generate(type: (typeof GENERATED)[number]): Promise<{ private: string; public: string }> {
  for (let attempt = 1; ; attempt++) {
    const keys = await generateOnce(type);
    if (!(utils.parseKey(keys.private) instanceof Error)) return keys;
    if (attempt === 20) throw new Error(`could not generate a readable ${type} SSH host key`);
  }
}

/**
 * Writes `content` to `file` unless it exists, atomically: several processes of one forge
 * (serve --workers) starting together all end up with the key the first one wrote.
 */
function writeOnce(file: string, content: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content, { mode });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** The host keys' private key texts, generating the default set on the first start. */
export async function loadHostKeys(files: string[], log: (message: string) => void = () => undefined): Promise<Buffer[]> {
  let present = files.filter((f) => fs.existsSync(f));
  if (!present.length) {
    if (!files.length) throw new Error('no SSH host key files are configured (SSH_SERVER_HOST_KEYS)');
    const dir = path.dirname(files[0]);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    present = [];
    for (const type of GENERATED) {
      const file = path.join(dir, `forge.${type}`);
      if (!fs.existsSync(file)) {
        const keys = await generate(type);
        writeOnce(file, keys.private, 0o600);
        // The public half of whichever key won the race.
        const kept = utils.parseKey(fs.readFileSync(file));
        if (!(kept instanceof Error)) writeOnce(`${file}.pub`, `${kept.type} ${kept.getPublicSSH().toString('base64')}\n`, 0o644);
        log(`generated SSH host key ${file}`);
      }
      present.push(file);
    }
  }
  return present.map((f) => {
    const text = fs.readFileSync(f);
    const parsed = utils.parseKey(text);
    if (parsed instanceof Error) throw new Error(`SSH host key ${f} cannot be read: ${parsed.message}`);
    return text;
  });
}
