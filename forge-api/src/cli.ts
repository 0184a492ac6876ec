/**
 * portcullis-forge command line, modelled on Gitea's:
 *   portcullis-forge serve [--port N] [--workers N]   (alias: web)
 *   portcullis-forge admin user create --username U --password P --email E [--admin] [--must-change-password]
 *   portcullis-forge admin badge create --slug S [--description D] [--image-url URL]
 *   portcullis-forge admin user list
 *   portcullis-forge migrate
 * Environment: FORGE_PORT, FORGE_DATA_DIR, DATABASE_URL, ENABLE_SWAGGER, MAX_RESPONSE_ITEMS, ROOT_URL.
 */
import cluster from 'node:cluster';
import { loadConfig } from './config';
import { createPrisma, migrate } from './services/database';
import { UserService } from './services/users';
import { BadgeService } from './services/badges';
import { PasswordHasher } from './services/passwords';
import { DomainError } from './services/errors';
import { startCluster, startServer } from './server';

const USAGE = `Usage:
  portcullis-forge serve [--port N] [--workers N]   (N processes sharing the port; FORGE_WORKERS)
  portcullis-forge admin user create --username U --password P --email E [--admin] [--must-change-password]
  portcullis-forge admin user list
  portcullis-forge admin badge create --slug S [--description D] [--image-url URL]
  portcullis-forge migrate

Environment: FORGE_PORT (3000), FORGE_DATA_DIR (./data), DATABASE_URL (file:<data>/forge.db or postgresql://...),
ENABLE_SWAGGER (true), MAX_RESPONSE_ITEMS (50), ROOT_URL (http://localhost:<port>/),
START_SSH_SERVER (false: git over SSH; SSH_LISTEN_HOST, SSH_LISTEN_PORT, SSH_DOMAIN, SSH_PORT (22), SSH_USER)`;

export function parseFlags(args: string[]): { positional: string[]; flags: Record<string, string | boolean> } {
  const positional: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      const v = a.slice(eq + 1);
      flags[a.slice(2, eq)] = v === 'true' ? true : v === 'false' ? false : v;
    } else if (i + 1 < args.length && !args[i + 1].startsWith('--') && !['admin', 'must-change-password'].includes(a.slice(2))) {
      flags[a.slice(2)] = args[++i];
    } else {
      flags[a.slice(2)] = true;
    }
  }
  return { positional, flags };
}

/**
 * The one frame of the admin commands: the database migrated and opened, a rule the services
 * refuse printed as Gitea's CLI prints it (exit 1), the connection closed whatever happens.
 */
async function withDatabase(run: (prisma: ReturnType<typeof createPrisma>, config: ReturnType<typeof loadConfig>) => Promise<number>): Promise<number> {
  const config = loadConfig();
  await migrate(config.databaseUrl);
  const prisma = createPrisma(config.databaseUrl);
  try {
    return await run(prisma, config);
  } catch (err) {
    if (err instanceof DomainError) {
      console.error(`Command error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

async function adminUserCreate(flags: Record<string, string | boolean>): Promise<number> {
  const username = flags.username ?? flags.name;
  const { password, email } = flags;
  if (typeof username !== 'string' || typeof password !== 'string' || typeof email !== 'string') {
    console.error('admin user create needs --username, --password and --email');
    return 2;
  }
  return withDatabase(async (prisma, config) => {
    const users = new UserService(prisma, new PasswordHasher(config.passwordHashAlgo));
    const user = await users.create({
      username,
      password,
      email,
      admin: flags.admin === true,
      must_change_password: flags['must-change-password'] === true,
    });
    console.log(`New user '${user.name}' has been successfully created!`);
    return 0;
  });
}

/** Defines a badge admins may then give through the API (Gitea does it in its admin web pages). */
async function adminBadgeCreate(flags: Record<string, string | boolean>): Promise<number> {
  const slug = flags.slug;
  if (typeof slug !== 'string') {
    console.error('admin badge create needs --slug (and may take --description, --image-url)');
    return 2;
  }
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  return withDatabase(async (prisma) => {
    const badge = await new BadgeService(prisma).create({ slug, description: str(flags.description), imageUrl: str(flags['image-url']) });
    console.log(`Badge '${badge.Slug}' has been successfully created (id ${badge.ID})`);
    return 0;
  });
}

async function adminUserList(): Promise<number> {
  return withDatabase(async (prisma) => {
    const rows = await prisma.user.findMany({ where: { type: 0 }, orderBy: { id: 'asc' } });
    console.log('ID\tUsername\tEmail\tIsActive\tIsAdmin');
    for (const u of rows) console.log(`${u.id}\t${u.name}\t${u.email}\t${u.isActive}\t${u.isAdmin}`);
    return 0;
  });
}

export async function main(argv: string[]): Promise<number> {
  const { positional, flags } = parseFlags(argv);
  const [cmd, sub, action] = positional;
  if (flags.help || flags.h || !cmd || cmd === 'help') {
    console.log(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === 'serve' || cmd === 'web') {
    const overrides = typeof flags.port === 'string' ? { port: Number(flags.port) } : {};
    const workers = Number(typeof flags.workers === 'string' ? flags.workers : process.env.FORGE_WORKERS ?? 1);
    if (!Number.isInteger(workers) || workers < 1) {
      console.error(`--workers must be a positive integer, not ${flags.workers ?? process.env.FORGE_WORKERS}`);
      return 2;
    }
    if (workers > 1 || cluster.isWorker) await startCluster(overrides, workers);
    else await startServer(overrides);
    return -1; // keep running
  }
  if (cmd === 'migrate') {
    const config = loadConfig();
    const applied = await migrate(config.databaseUrl);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
    return 0;
  }
  if (cmd === 'admin' && sub === 'user' && action === 'create') return adminUserCreate(flags);
  if (cmd === 'admin' && sub === 'user' && action === 'list') return adminUserList();
  if (cmd === 'admin' && sub === 'badge' && action === 'create') return adminBadgeCreate(flags);
  console.error(`unknown command: ${positional.join(' ')}\n\n${USAGE}`);
  return 2;
}

if (require.main === module || process.argv[1]?.endsWith('portcullis-forge.js') || process.argv[1]?.endsWith('portcullis-forge')) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
