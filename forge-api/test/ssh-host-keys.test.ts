import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { utils } from 'ssh2';
import { loadHostKeys } from '../src/ssh/host-keys';

describe('SSH host keys', () => {
  // ssh2 generates an unreadable Ed25519 key about once in 200; 400 first starts would meet one
  // with a probability of ~86 % if such a key could be written.
  test('every generated host key can be read back, start after start', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-host-keys-'));
    try {
      for (let i = 0; i < 400; i++) {
        const file = path.join(root, String(i), 'ssh', 'forge.ed25519');
        const keys = await loadHostKeys([file]);
        expect(keys).toHaveLength(2);
        for (const k of keys) expect(utils.parseKey(k)).not.toBeInstanceOf(Error);
        // A second start, configured with both generated files, reads the same keys.
        const both = [file, path.join(path.dirname(file), 'forge.ecdsa')];
        expect((await loadHostKeys(both)).map(String)).toEqual(keys.map(String));
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
