/**
 * The forge's built-in SSH server (Gitea's START_SSH_SERVER): git over SSH with public keys.
 * A client logs in as the configured user with a user's key or a deploy key and runs
 * git-upload-pack, git-receive-pack or git-upload-archive on `owner/repo[.wiki].git`; the
 * forge runs git itself (no shell, no OpenSSH daemon, no authorized_keys file). Access follows
 * services/ssh-access.ts; pushes pass the same pre-receive rules as over HTTP
 * (services/git/transport.ts) and are processed after as HTTP pushes are.
 *
 * ssh2 is the SSH implementation: pure JavaScript (no native build, nothing downloaded at
 * install), server-side public key authentication with signature checks, exec/env/shell
 * channel requests, and maintained for years.
 */
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Server, utils, type AuthContext, type Connection, type ServerChannel, type Session } from 'ssh2';
import type { ForgeConfig } from '../config';
import type { Services } from '../services';
import { SshRefusal, type SshGrant, type SshKey } from '../services/ssh-access';
import { WRITE_DENIED } from '../services/push-rules';
import { parseSshCommand, SshCommandError } from './command';
import { loadHostKeys } from './host-keys';

export interface SshLog {
  info(msg: string): void;
  warn(msg: string): void;
  error(obj: unknown, msg: string): void;
}

/** Gitea's filter for a client's GIT_PROTOCOL before it reaches git's environment. */
const SAFE_GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

/** OpenSSH's SHA256 fingerprint of a public key blob, the form the keys are stored under. */
export function fingerprintOf(blob: Buffer): string {
  return 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** Gitea's way of refusing over SSH: the message framed by `error:` lines on stderr, exit 1. */
function fail(channel: ServerChannel, message: string): void {
  channel.stderr.write(`error:\nerror: ${message}\nerror:\n`);
  channel.exit(1);
  channel.end();
}

export class ForgeSshServer {
  private server: Server | null = null;
  private readonly connections = new Set<Connection>();

  constructor(
    private readonly config: ForgeConfig,
    private readonly services: Services,
    private readonly log: SshLog,
  ) {}

  /** Loads (or makes) the host keys and listens; resolves with the bound port. */
  async start(): Promise<number> {
    const hostKeys = await loadHostKeys(this.config.sshServerHostKeys, (m) => this.log.info(m));
    const server = new Server({ hostKeys }, (client, info) => this.onConnection(client, info.ip));
    this.server = server;
    server.on('error', (err: Error) => this.log.error({ err }, 'SSH server error'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.sshListenPort, this.config.sshListenHost || undefined, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    this.log.info(`SSH server listening on ${this.config.sshListenHost || '*'}:${port}`);
    return port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const c of this.connections) c.end();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onConnection(client: Connection, ip: string): void {
    this.connections.add(client);
    // Set only once a signature proved the client holds the key's private half: a key offered
    // without one (or another key that failed) never becomes the connection's identity.
    let verified: SshKey | null = null;
    client.on('error', () => undefined);
    client.on('close', () => this.connections.delete(client));
    client.on('authentication', (ctx) => {
      void this.authenticate(ctx, ip, (key) => (verified = key));
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const key = verified;
        if (!key) return;
        this.onSession(accept(), key);
      });
    });
  }

  /** Accepts a public key the forge knows; `onVerified` learns it once its signature is verified. */
  private async authenticate(ctx: AuthContext, ip: string, onVerified: (key: SshKey) => void): Promise<SshKey | null> {
    try {
      if (ctx.method !== 'publickey') {
        ctx.reject(['publickey']);
        return null;
      }
      if (ctx.username !== this.config.sshBuiltinServerUser) {
        this.log.warn(`Invalid SSH username ${ctx.username} - must use ${this.config.sshBuiltinServerUser} for all git operations via ssh; failed authentication attempt from ${ip}`);
        ctx.reject(['publickey']);
        return null;
      }
      const fingerprint = fingerprintOf(ctx.key.data);
      const key = await this.services.sshAccess.keyByFingerprint(fingerprint);
      if (!key) {
        this.log.warn(`Unknown public key: ${fingerprint} from ${ip}; failed authentication attempt from ${ip}`);
        ctx.reject(['publickey']);
        return null;
      }
      // Without a signature the client only asks whether the key would do.
      if (!ctx.signature) {
        ctx.accept();
        return null;
      }
      const parsed = utils.parseKey(ctx.key.data);
      if (parsed instanceof Error || parsed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) !== true) {
        ctx.reject(['publickey']);
        return null;
      }
      onVerified(key);
      ctx.accept();
      return key;
    } catch (err) {
      this.log.error({ err }, 'SSH authentication failed');
      ctx.reject(['publickey']);
      return null;
    }
  }

  private onSession(session: Session, key: SshKey): void {
    let gitProtocol = '';
    session.on('env', (accept, _reject, info) => {
      if (info.key === 'GIT_PROTOCOL') gitProtocol = info.val;
      accept?.();
    });
    // No terminal: text must reach the client as written (Gitea turns pty requests down too).
    session.on('pty', (_accept, reject) => reject?.());
    session.on('shell', (accept) => void this.greet(accept(), key));
    session.on('exec', (accept, _reject, info) => {
      const channel = accept();
      if (!info.command.trim()) void this.greet(channel, key);
      else void this.run(channel, key, info.command, gitProtocol);
    });
  }

  /** `ssh git@host` without a command: who the key belongs to, and no shell. */
  private async greet(channel: ServerChannel, key: SshKey): Promise<void> {
    try {
      channel.stderr.write(await this.services.sshAccess.greeting(key.id, this.config.appName));
      channel.exit(0);
      channel.end();
    } catch (err) {
      if (err instanceof SshRefusal) return fail(channel, err.message);
      this.log.error({ err }, 'SSH greeting failed');
      fail(channel, 'Key check failed');
    }
  }

  private async run(channel: ServerChannel, key: SshKey, command: string, gitProtocol: string): Promise<void> {
    let grant: SshGrant;
    let service: ReturnType<typeof parseSshCommand>;
    try {
      service = parseSshCommand(command);
      grant = await this.services.sshAccess.authorize(key.id, {
        ownerName: service.ownerName,
        repoName: service.repoName,
        isWiki: service.isWiki,
        write: service.write,
        isCodePush: service.write && !service.isWiki,
      });
    } catch (err) {
      if (err instanceof SshCommandError || err instanceof SshRefusal) return fail(channel, err.message);
      this.log.error({ err }, 'SSH command check failed');
      return fail(channel, 'Internal Server Error (no specific error)');
    }

    const env: Record<string, string> = {
      GITEA_REPO_ID: String(grant.repo.id),
      GITEA_REPO_NAME: grant.repo.name,
      GITEA_REPO_USER_NAME: grant.repo.owner.name,
      GITEA_REPO_IS_WIKI: String(grant.isWiki),
      GITEA_PUSHER_ID: String(grant.pusher.id),
      GITEA_PUSHER_NAME: grant.pusher.name,
      GITEA_KEY_ID: String(grant.keyId),
      GITEA_DEPLOY_KEY_ID: String(grant.deployKeyId),
    };
    if (SAFE_GIT_PROTOCOL.test(gitProtocol)) env.GIT_PROTOCOL = gitProtocol;
    const isPush = service.service === 'receive-pack';
    // A clone may wait for a repack before git starts (transport.ts): a client gone meanwhile is
    // seen here, its 'close' having passed before the kill below could listen for it.
    let gone = false;
    channel.once('close', () => (gone = true));
    channel.on('error', () => undefined);
    const child = await this.services.gitTransport.spawn(service.service, grant.repoPath, {
      env,
      checkPush: async (updates, hookEnv) => {
        // The code's branch and tag protections do not cover its wiki (as over HTTP).
        if (grant.isWiki) return grant.canWrite ? null : WRITE_DENIED;
        return this.services.pushRules.check(grant.repo, grant.repoPath, grant.pusher, updates, hookEnv, { deployKey: grant.deployKeyId > 0, canWrite: grant.canWrite });
      },
      // AGit pushes (refs/for/*) open or update pull requests, as over HTTP.
      procReceive: isPush && !grant.isWiki ? (commands, options) => this.services.pulls.agit.procReceive(grant.repo, grant.repoPath, grant.pusher, commands, options) : undefined,
      postReceive: isPush && !grant.isWiki ? (updates) => this.services.pulls.pushMessage.forPush(grant.repo, updates) : undefined,
      onCheckError: (err) => this.log.error({ err }, 'checking an SSH push failed'),
    });
    child.stdin.on('error', () => undefined);
    channel.pipe(child.stdin);
    child.stdout.pipe(channel, { end: false });
    child.stderr.pipe(channel.stderr, { end: false });
    // A client that goes away must not leave git running.
    const stop = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    };
    channel.on('close', stop);
    if (gone) stop();
    const code = await new Promise<number>((resolve) => {
      child.on('error', () => resolve(-1));
      child.on('close', (c) => resolve(c ?? 1));
    });
    if (isPush && !grant.isWiki) {
      // The client's `git push` returns only after size/branches/default branch are refreshed
      // and the push is announced (webhooks, feeds), as over HTTP.
      try {
        await this.services.repos.afterPush(grant.pusher, grant.repo.id);
      } catch (err) {
        this.log.error({ err }, 'refreshing repository after an SSH push failed');
      }
    }
    if (code === 0) {
      await this.services.sshAccess.keyUsed(grant.keyId, grant.repo.id).catch((err) => this.log.error({ err }, 'recording SSH key use failed'));
    }
    if (channel.writableNeedDrain) await new Promise((resolve) => channel.once('drain', resolve));
    if (code < 0) return fail(channel, 'Failed to execute git command');
    channel.exit(code);
    channel.end();
  }
}
