import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultNginxBinary } from '../../src/apply/nginx-binary';

const NGINX = defaultNginxBinary();

/** `nginx -t` on a minimal config: `http` lines at http level, `location` lines in `location /`. */
export function nginxTest(http: string, location: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-policies-'));
  try {
    mkdirSync(join(dir, 'logs'));
    writeFileSync(
      join(dir, 'nginx.conf'),
      `error_log stderr; pid ${join(dir, 'nginx.pid')};\nevents {}\nhttp {\n${http}\nserver { listen 127.0.0.1:1; location / {\n${location}\nreturn 200; } }\n}\n`,
    );
    try {
      execFileSync(NGINX, ['-t', '-q', '-p', dir, '-c', 'nginx.conf'], { encoding: 'utf8', stdio: 'pipe' });
      return { ok: true, output: '' };
    } catch (e) {
      return { ok: false, output: String((e as { stderr?: string }).stderr ?? e) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
