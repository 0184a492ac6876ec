import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * A CA and a serving certificate for the controller's agent config server on 127.0.0.1 (as
 * the chart makes them with Helm), written into `dir`: ca.crt, tls.crt, tls.key.
 */
export function makeAgentTls(dir: string): { ca: string; cert: string; key: string } {
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=portcullis-test-ca', '-keyout', f('ca.key'), '-out', f('ca.crt'));
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=portcullis-agent-server', '-keyout', f('tls.key'), '-out', f('tls.csr'));
  fs.writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ssl('x509', '-req', '-in', f('tls.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', f('ext.cnf'), '-out', f('tls.crt'));
  return { ca: f('ca.crt'), cert: f('tls.crt'), key: f('tls.key') };
}
