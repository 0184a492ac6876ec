/** Repository SSH clone URLs as Gitea's ComposeSSHCloneURL writes them (pure). */
import { convertContext } from '../src/services/convert/context';
import { sshCloneUrl } from '../src/services/convert/repository';

const ctx = (sshDomain: string, sshPort: number, startSshServer = true) =>
  convertContext({ rootUrl: 'http://forge.example/', startSshServer, sshUser: 'git', sshDomain, sshPort });

test('port 22: the scp-like form; an IPv6 host in brackets', () => {
  expect(sshCloneUrl(ctx('forge.example', 22), 'alice', 'one')).toBe('git@forge.example:alice/one.git');
  expect(sshCloneUrl(ctx('::1', 22), 'alice', 'one')).toBe('git@[::1]:alice/one.git');
});

test('another port: an ssh:// URL with host:port; names are path-escaped', () => {
  expect(sshCloneUrl(ctx('forge.example', 2222), 'alice', 'one')).toBe('ssh://git@forge.example:2222/alice/one.git');
  expect(sshCloneUrl(ctx('::1', 2222), 'alice', 'one')).toBe('ssh://git@[::1]:2222/alice/one.git');
  expect(sshCloneUrl(ctx('h', 2222), 'a b', 'c?d')).toBe('ssh://git@h:2222/a%20b/c%3Fd.git');
});

test('no SSH server: empty', () => {
  expect(sshCloneUrl(ctx('forge.example', 22, false), 'alice', 'one')).toBe('');
});
