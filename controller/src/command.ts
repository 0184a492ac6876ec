/**
 * What the two commands (portcullis-controller, portcullis-agent) share: their flag syntax,
 * usage errors with exit code 64, and running until SIGTERM/SIGINT. Flags are GNU style:
 * `--name=value` or `--name value`; a switch is `--name`, `--name=true` or `--name=false`.
 */
import { createLogger, isLogLevel, LOG_LEVELS, type Logger, type LogLevel } from './log';

/** A command line the command cannot run with; printed with the usage text, exit code 64. */
export class UsageError extends Error {}

/** Reads `argv` into name -> value; `--help`/`-h` sets "help"; unknown names are usage errors. */
export function readFlags(argv: string[], flags: { values: readonly string[]; switches: readonly string[] }): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      values.set('help', 'true');
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    if (flags.switches.includes(name)) {
      const v = eq < 0 ? 'true' : arg.slice(eq + 1);
      if (v !== 'true' && v !== 'false') throw new UsageError(`--${name} takes true or false, got "${v}"`);
      values.set(name, v);
      continue;
    }
    if (!flags.values.includes(name)) throw new UsageError(`unknown option --${name}`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    values.set(name, value);
  }
  return values;
}

/** --log-level, info unless given. */
export function logLevelFlag(values: Map<string, string>): LogLevel {
  const logLevel = values.get('log-level') ?? 'info';
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return logLevel;
}

/**
 * Parses the command line and runs the command with a logger of its component; resolves with
 * the process exit code (64 for a usage error, 1 when the command fails).
 */
export async function runCommand<O extends { help: boolean; logLevel: LogLevel }>(
  argv: string[],
  command: { name: string; component: string; usage: string; parse(argv: string[]): O; run(options: O, log: Logger): Promise<number> },
): Promise<number> {
  let options: O;
  try {
    options = command.parse(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${command.name}: ${err.message}\n\n${command.usage}`);
      return 64; // EX_USAGE
    }
    throw err;
  }
  if (options.help) {
    process.stdout.write(command.usage);
    return 0;
  }
  const log = createLogger({ level: options.logLevel, fields: { component: command.component } });
  try {
    return await command.run(options, log);
  } catch (err) {
    log.error(`${command.component} failed`, { error: (err as Error).message });
    return 1;
  }
}

/** Exits with the code `main` resolves with; a crash prints its stack and exits 1. */
export function exitWith(name: string, main: Promise<number>): void {
  main.then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${name}: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}

/** Resolves with `stop`'s exit code after the first SIGTERM or SIGINT. */
export function untilSignalled(stop: (signal: NodeJS.Signals) => Promise<number>): Promise<number> {
  return new Promise<number>((resolve) => {
    process.once('SIGTERM', () => void stop('SIGTERM').then(resolve));
    process.once('SIGINT', () => void stop('SIGINT').then(resolve));
  });
}
