import os from 'node:os';
import path from 'node:path';
import { parseGoDuration } from './services/go-duration';
import { PasswordHasher } from './services/passwords';
import { DEFAULT_APPLICATION_NAMES } from './services/oauth2/builtin-applications';

/**
 * The Gitea release whose API v1 the forge implements (paths, JSON shapes, statuses); answered
 * by GET /api/v1/version because clients (tea, gitea-js, SDKs) decide what to call from it.
 */
export const GITEA_API_VERSION = '1.27.3';

/** Everything the forge reads from its environment, resolved once. */
export interface ForgeConfig {
  port: number;
  host: string;
  dataDir: string;
  reposDir: string;
  attachmentsDir: string;
  /** Largest attachment upload in bytes (Gitea's [attachment] MAX_SIZE, in MiB in ATTACHMENT_MAX_SIZE). */
  attachmentMaxSize: number;
  databaseUrl: string;
  provider: 'sqlite' | 'postgresql';
  enableSwagger: boolean;
  maxResponseItems: number;
  defaultPagingNum: number;
  /** Absolute base URL with a trailing slash, e.g. http://localhost:3000/ (Gitea's ROOT_URL). */
  rootUrl: string;
  /** Alias of rootUrl for code that follows the contract's name. */
  appUrl: string;
  appName: string;
  /** Version answered by GET /api/v1/version (plain semver: clients gate features on it); GITEA_API_VERSION unless overridden. */
  version: string;
  defaultBranch: string;
  /** Site default for users whose max_repo_creation is -1; -1 = unlimited. */
  maxCreationLimit: number;
  disableQueryAuthToken: boolean;
  /**
   * Gitea's [security] PASSWORD_HASH_ALGO: how new password hashes are made (pbkdf2 (default,
   * pbkdf2$50000$50), pbkdf2_v1, pbkdf2_hi, scrypt, bcrypt, or parameters spelled out).
   */
  passwordHashAlgo: string;
  /** Webhook deliveries: per-request timeout, first retry delay (doubles), attempts. */
  webhookDeliverTimeoutMs: number;
  webhookRetryBaseMs: number;
  webhookMaxAttempts: number;
  /**
   * Servers webhooks may call (Gitea's [security] ALLOWED_HOST_LIST, [webhook] before 1.27):
   * `external` (default), `private`, `loopback`, `*`, CIDRs and host globs, comma-separated.
   */
  webhookAllowedHostList: string;
  /** CA public keys (authorized_keys lines) trusted to sign SSH certificates for HTTP signatures. */
  sshTrustedUserCaKeys: string[];
  /** Gitea's [migrations] ALLOWED_DOMAINS / BLOCKED_DOMAINS / ALLOW_LOCALNETWORKS: where migrations may clone from. */
  migrationsAllowedDomains: string;
  migrationsBlockedDomains: string;
  migrationsAllowLocalNetworks: boolean;
  /** Gitea's [mirror] MIN_INTERVAL (default 10m, never below 1m): the shortest interval of a pull or push mirror. */
  mirrorMinIntervalMs: number;
  /**
   * Quiet time after a repository's last push before its background repack with bitmaps and
   * commit-graph (services/git/housekeeping.ts); GIT_HOUSEKEEPING_DELAY_MS, default 2000;
   * a negative value turns housekeeping off.
   */
  gitHousekeepingDelayMs: number;
  /** Where package files are stored (<dataDir>/packages). */
  packagesDir: string;
  /**
   * The built-in SSH server (Gitea's [server] START_SSH_SERVER, off by default as in Gitea;
   * DISABLE_SSH turns it off whatever START_SSH_SERVER says).
   */
  startSshServer: boolean;
  /** Address and port it listens on (SSH_LISTEN_HOST, all addresses by default; SSH_LISTEN_PORT, SSH_PORT by default). */
  sshListenHost: string;
  sshListenPort: number;
  /** Host and port written in clone URLs (SSH_DOMAIN: DOMAIN, else ROOT_URL's host; SSH_PORT: 22). */
  sshDomain: string;
  sshPort: number;
  /**
   * Domain of the no-reply e-mail addresses (NO_REPLY_ADDRESS: "noreply." + DOMAIN, else + ROOT_URL's
   * host, as Gitea derives it): the placeholder e-mail shown for hidden addresses and the git
   * identity of users who hide theirs; commit e-mails at this domain name their forge user.
   */
  noReplyAddress: string;
  /** The user name clients must log in as (BUILTIN_SSH_SERVER_USER: RUN_USER, else the account running the forge). */
  sshBuiltinServerUser: string;
  /** The user written in clone URLs (SSH_USER: the built-in server's user). */
  sshUser: string;
  /**
   * Host key files (SSH_SERVER_HOST_KEYS, comma-separated, relative to the data directory); the
   * ones present are used; when none is, Ed25519 and ECDSA keys are generated beside the first.
   */
  sshServerHostKeys: string[];
  /**
   * Built-in OAuth2 applications that exist (Gitea's [oauth2] DEFAULT_APPLICATIONS,
   * OAUTH2_DEFAULT_APPLICATIONS comma-separated; all four by default, empty for none).
   */
  oauth2DefaultApplications: string[];
  /** Lifetimes of OAuth2 access and refresh tokens (Gitea: 3600 s and 730 h). */
  oauth2AccessTokenTtlSeconds: number;
  oauth2RefreshTokenTtlSeconds: number;
  /**
   * Failed sign-ins (wrong password or second factor) allowed per client address and account
   * within signInFailureWindowMs before further attempts are refused with 429
   * (SIGN_IN_MAX_FAILURES, 0 for no limit; SIGN_IN_FAILURE_WINDOW, a Go duration).
   */
  signInMaxFailures: number;
  signInFailureWindowMs: number;
  /**
   * Gitea's [security] TWO_FACTOR_AUTH = enforced (TWO_FACTOR_AUTH): a signed-in user without
   * two-factor authentication gets no access to any repository on the API and cannot authorize
   * OAuth2 applications until enrolled.
   */
  twoFactorAuthEnforced: boolean;
}

export type ForgeConfigInput = Partial<ForgeConfig>;

/** Gitea's default host key files, under the data directory. */
const DEFAULT_HOST_KEYS = ['ssh/forge.rsa', 'ssh/forge.ed25519', 'ssh/forge.ecdsa'];

function currentUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'git';
  }
}

function bool(v: string | undefined, dflt: boolean): boolean {
  if (v === undefined || v === '') return dflt;
  return !/^(0|false|no|off)$/i.test(v.trim());
}

function int(v: string | undefined, dflt: number): number {
  const n = v === undefined ? NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : dflt;
}

/** An integer that may be zero or negative (a switch-off value). */
function anyInt(v: string | undefined, dflt: number): number {
  const n = v === undefined ? NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : dflt;
}

/** Gitea's TWO_FACTOR_AUTH: empty or `enforced`; anything else is refused at start, as Gitea does. */
function twoFactorAuthSetting(v: string | undefined): boolean {
  if (v === undefined || v === '') return false;
  if (v === 'enforced') return true;
  throw new Error(`Invalid two-factor auth option: ${v}`);
}

export function providerOf(url: string): 'sqlite' | 'postgresql' {
  return /^postgres(ql)?:\/\//i.test(url) ? 'postgresql' : 'sqlite';
}

/** Builds the config from environment variables, then applies explicit overrides (tests). */
export function loadConfig(overrides: ForgeConfigInput = {}, env: NodeJS.ProcessEnv = process.env): ForgeConfig {
  const port = overrides.port ?? int(env.FORGE_PORT, 3000);
  const dataDir = path.resolve(overrides.dataDir ?? env.FORGE_DATA_DIR ?? './data');
  const databaseUrl = overrides.databaseUrl ?? env.DATABASE_URL ?? `file:${path.join(dataDir, 'forge.db')}`;
  let rootUrl = overrides.rootUrl ?? overrides.appUrl ?? env.ROOT_URL ?? `http://localhost:${port}/`;
  if (!rootUrl.endsWith('/')) rootUrl += '/';
  const sshPort = overrides.sshPort ?? int(env.SSH_PORT, 22);
  const builtinUser = overrides.sshBuiltinServerUser ?? (env.BUILTIN_SSH_SERVER_USER || env.RUN_USER || currentUser());
  return {
    port,
    host: overrides.host ?? env.FORGE_HOST ?? '0.0.0.0',
    dataDir,
    reposDir: overrides.reposDir ?? path.join(dataDir, 'repositories'),
    attachmentsDir: overrides.attachmentsDir ?? path.join(dataDir, 'attachments'),
    attachmentMaxSize: overrides.attachmentMaxSize ?? int(env.ATTACHMENT_MAX_SIZE, 2048) * 1024 * 1024,
    databaseUrl,
    provider: providerOf(databaseUrl),
    enableSwagger: overrides.enableSwagger ?? bool(env.ENABLE_SWAGGER, true),
    maxResponseItems: overrides.maxResponseItems ?? int(env.MAX_RESPONSE_ITEMS, 50),
    defaultPagingNum: overrides.defaultPagingNum ?? int(env.DEFAULT_PAGING_NUM, 30),
    rootUrl,
    appUrl: rootUrl,
    appName: overrides.appName ?? env.APP_NAME ?? 'Portcullis Forge',
    version: overrides.version ?? GITEA_API_VERSION,
    defaultBranch: overrides.defaultBranch ?? env.DEFAULT_BRANCH ?? 'main',
    maxCreationLimit: overrides.maxCreationLimit ?? -1,
    disableQueryAuthToken: overrides.disableQueryAuthToken ?? bool(env.DISABLE_QUERY_AUTH_TOKEN, false),
    passwordHashAlgo: new PasswordHasher(overrides.passwordHashAlgo ?? env.PASSWORD_HASH_ALGO ?? 'pbkdf2').setting,
    webhookDeliverTimeoutMs: overrides.webhookDeliverTimeoutMs ?? int(env.WEBHOOK_DELIVER_TIMEOUT_MS, 5000),
    webhookRetryBaseMs: overrides.webhookRetryBaseMs ?? int(env.WEBHOOK_RETRY_BASE_MS, 10000),
    webhookMaxAttempts: overrides.webhookMaxAttempts ?? int(env.WEBHOOK_MAX_ATTEMPTS, 8),
    gitHousekeepingDelayMs: overrides.gitHousekeepingDelayMs ?? anyInt(env.GIT_HOUSEKEEPING_DELAY_MS, 2000),
    // The [webhook] key wins over the [security] one, as Gitea reads the deprecated key first.
    webhookAllowedHostList: overrides.webhookAllowedHostList ?? env.WEBHOOK_ALLOWED_HOST_LIST ?? env.ALLOWED_HOST_LIST ?? 'external',
    sshTrustedUserCaKeys:
      overrides.sshTrustedUserCaKeys ?? (env.SSH_TRUSTED_USER_CA_KEYS ?? '').split(/[\n,]/).map((s) => s.trim()).filter(Boolean),
    packagesDir: overrides.packagesDir ?? path.join(dataDir, 'packages'),
    migrationsAllowedDomains: overrides.migrationsAllowedDomains ?? env.MIGRATIONS_ALLOWED_DOMAINS ?? '',
    migrationsBlockedDomains: overrides.migrationsBlockedDomains ?? env.MIGRATIONS_BLOCKED_DOMAINS ?? '',
    migrationsAllowLocalNetworks: overrides.migrationsAllowLocalNetworks ?? bool(env.MIGRATIONS_ALLOW_LOCALNETWORKS, false),
    mirrorMinIntervalMs: Math.max(60_000, overrides.mirrorMinIntervalMs ?? parseGoDuration(env.MIRROR_MIN_INTERVAL ?? '') ?? 10 * 60_000),
    startSshServer: overrides.startSshServer ?? (bool(env.START_SSH_SERVER, false) && !bool(env.DISABLE_SSH, false)),
    sshListenHost: overrides.sshListenHost ?? env.SSH_LISTEN_HOST ?? '',
    sshListenPort: overrides.sshListenPort ?? int(env.SSH_LISTEN_PORT, sshPort),
    sshDomain: overrides.sshDomain ?? (env.SSH_DOMAIN || env.DOMAIN || new URL(rootUrl).hostname),
    noReplyAddress: (overrides.noReplyAddress ?? (env.NO_REPLY_ADDRESS || `noreply.${env.DOMAIN || new URL(rootUrl).hostname}`)).toLowerCase(),
    sshPort,
    sshBuiltinServerUser: builtinUser,
    sshUser: overrides.sshUser ?? (env.SSH_USER || builtinUser),
    sshServerHostKeys: (overrides.sshServerHostKeys ?? (env.SSH_SERVER_HOST_KEYS ? env.SSH_SERVER_HOST_KEYS.split(',') : DEFAULT_HOST_KEYS))
      .map((k) => k.trim())
      .filter(Boolean)
      .map((k) => path.resolve(dataDir, k)),
    oauth2DefaultApplications:
      overrides.oauth2DefaultApplications ??
      (env.OAUTH2_DEFAULT_APPLICATIONS === undefined
        ? [...DEFAULT_APPLICATION_NAMES]
        : env.OAUTH2_DEFAULT_APPLICATIONS.split(',').map((s) => s.trim()).filter(Boolean)),
    oauth2AccessTokenTtlSeconds: overrides.oauth2AccessTokenTtlSeconds ?? int(env.OAUTH2_ACCESS_TOKEN_EXPIRATION_TIME, 3600),
    oauth2RefreshTokenTtlSeconds: overrides.oauth2RefreshTokenTtlSeconds ?? int(env.OAUTH2_REFRESH_TOKEN_EXPIRATION_TIME, 730) * 3600,
    signInMaxFailures: overrides.signInMaxFailures ?? Math.max(0, anyInt(env.SIGN_IN_MAX_FAILURES, 10)),
    signInFailureWindowMs: overrides.signInFailureWindowMs ?? parseGoDuration(env.SIGN_IN_FAILURE_WINDOW ?? '') ?? 10 * 60_000,
    twoFactorAuthEnforced: overrides.twoFactorAuthEnforced ?? twoFactorAuthSetting(env.TWO_FACTOR_AUTH),
  };
}
