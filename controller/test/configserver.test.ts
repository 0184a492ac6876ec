import { foldOutcome, PENDING_MESSAGE, readHeldPorts } from '../src/configserver/outcomes';
import { TokenAuthenticator, AuthError } from '../src/configserver/auth';
import { configVersion } from '../src/dataplane/protocol';
import { parseStubStatus } from '../src/agent/metrics';

describe("a Gateway's Programmed from its agents' reports", () => {
  it('is True when the connected agents applied the config', () => {
    expect(foldOutcome([{ pod: 'a', version: 'v1', ok: true }, { pod: 'b', version: 'v1', ok: true }], 2, false)).toEqual({ programmed: true });
  });

  it('is False/Invalid, naming the pod and nginx message, when any replica refused it', () => {
    const o = foldOutcome([{ pod: 'b', version: 'v2', ok: false, message: 'unknown directive "x"' }, { pod: 'a', version: 'v2', ok: true }], 2, false);
    expect(o).toEqual({ programmed: false, reason: 'Invalid', message: expect.stringContaining('b: unknown directive "x"') });
  });

  it('is Pending with no agent, and unknown while agents reconnect to a new leader', () => {
    expect(foldOutcome([], 0, false)).toEqual({ programmed: false, reason: 'Pending', message: PENDING_MESSAGE });
    expect(foldOutcome([], 1, false)).toMatchObject({ programmed: false, reason: 'Pending' });
    expect(foldOutcome([], 0, true)).toBeUndefined();
  });
});

describe("an agent's held ports, as its report sends them", () => {
  it('are kept per transport; entries that are no port, or name no transport, are dropped, never a failure', () => {
    const good = { address: '0.0.0.0', port: 8081, error: '98: Address already in use', transports: ['UDP', 'TCP'] };
    expect(readHeldPorts([good, { ...good, port: 0 }, { ...good, port: 70000 }, { ...good, port: '80' }, { ...good, transports: ['SCTP'] }, { ...good, address: 1 }, null, 'x'])).toEqual([
      { ...good, transports: ['TCP', 'UDP'] },
    ]);
    expect(readHeldPorts({ port: 1 })).toEqual([]);
    expect(readHeldPorts(undefined)).toEqual([]);
    expect(readHeldPorts(Array.from({ length: 100 }, (_, i) => ({ ...good, port: i + 1 })))).toHaveLength(64);
  });
});

describe('agent tokens', () => {
  it('are reviewed once a minute per token and refused without a bearer token', async () => {
    let reviews = 0;
    let now = 0;
    const auth = new TokenAuthenticator(
      async (token, audiences) => {
        reviews++;
        expect(audiences).toEqual(['portcullis-agent']);
        return token === 'good' ? { username: 'system:serviceaccount:ns:gw' } : undefined;
      },
      ['portcullis-agent'],
      () => now,
    );
    await expect(auth.authenticate('Bearer good')).resolves.toEqual({ username: 'system:serviceaccount:ns:gw' });
    await auth.authenticate('Bearer good');
    expect(reviews).toBe(1);
    now = 61000;
    await auth.authenticate('Bearer good');
    expect(reviews).toBe(2);
    await expect(auth.authenticate('Bearer bad')).rejects.toMatchObject({ status: 401 });
    await expect(auth.authenticate(undefined)).rejects.toBeInstanceOf(AuthError);
  });
});

describe('config versions', () => {
  it('depend on every file name and content, not on their order', () => {
    const a = configVersion({ 'nginx.conf': 'x', 'servers.conf': 'y' });
    expect(configVersion({ 'servers.conf': 'y', 'nginx.conf': 'x' })).toBe(a);
    expect(configVersion({ 'nginx.conf': 'x', 'servers.conf': 'z' })).not.toBe(a);
    expect(configVersion({ 'nginx.conf': 'xservers.conf', '': 'y' })).not.toBe(a);
  });
});

describe('nginx stub_status', () => {
  it('is parsed into connection and request counts', () => {
    const text = 'Active connections: 3 \nserver accepts handled requests\n 17 17 42 \nReading: 0 Writing: 1 Waiting: 2 \n';
    expect(parseStubStatus(text)).toEqual({ active: 3, accepted: 17, handled: 17, requests: 42, reading: 0, writing: 1, waiting: 2 });
    expect(parseStubStatus('<html>')).toBeUndefined();
  });
});
