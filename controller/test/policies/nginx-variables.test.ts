import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isKnownKeyVariable, KEY_VARIABLES } from '../../src/resources/policies/nginx-variables';
import { defaultNginxBinary } from '../../src/apply/nginx-binary';

const NGINX = defaultNginxBinary();

/** `nginx -t` on a config whose limit_req_zone keys use the given variables. */
function nginxAccepts(keys: string[]): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-keys-'));
  try {
    mkdirSync(join(dir, 'logs'));
    const zones = keys.map((key, i) => `limit_req_zone ${key} zone=z${i}:32k rate=1r/s;`).join('\n');
    const limits = keys.map((_k, i) => `limit_req zone=z${i};`).join(' ');
    writeFileSync(
      join(dir, 'nginx.conf'),
      `error_log stderr; pid ${join(dir, 'nginx.pid')};\nevents {}\nhttp {\n${zones}\nserver { listen 127.0.0.1:1; location / { ${limits} return 200; } }\n}\n`,
    );
    try {
      const output = execFileSync(NGINX, ['-t', '-q', '-p', dir, '-c', 'nginx.conf'], { encoding: 'utf8', stdio: 'pipe' });
      return { ok: true, output };
    } catch (e) {
      return { ok: false, output: String((e as { stderr?: string }).stderr ?? e) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('rate-limit key variables against a real nginx', () => {
  it('every variable the schema accepts is one nginx knows', () => {
    const keys = [...KEY_VARIABLES.map((v) => `$${v}`), '$http_x_user', '$arg_tenant', '$cookie_session', 'tenant-$arg_t$binary_remote_addr'];
    const result = nginxAccepts(keys);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  });

  it('a variable the schema refuses is one nginx refuses too', () => {
    expect(isKnownKeyVariable('client_ip')).toBe(false);
    const result = nginxAccepts(['$client_ip']);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('unknown "client_ip" variable');
  });
});
