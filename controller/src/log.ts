/**
 * The controller's log: one JSON object per line on stderr, so both a person (`| jq`) and a
 * log collector can read it. Every part of the controller takes a Logger instead of writing to
 * the console, which keeps the pure stages testable and lets tests capture what was logged.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; stderr by default (stdout stays free for a command's own output). */
  write?: (line: string) => void;
  /** Fields added to every line, e.g. { component: 'nginx' }. */
  fields?: Record<string, unknown>;
}

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Errors are not JSON-serialisable as-is: keep their message (and stack at debug level). */
function serialisable(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { message: value.message, name: value.name } : value;
  }
  return out;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? 'info');
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const base = options.fields ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    const record = { time: new Date().toISOString(), level, msg, ...base, ...serialisable(fields ?? {}) };
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      // A circular or BigInt field must never take the controller down; log what we can.
      line = JSON.stringify({ time: record.time, level, msg, ...base, fieldsError: 'fields not serialisable' });
    }
    write(line);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  };
}

/** A child logger: the same output with extra fields on every line. */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (msg, f) => log.debug(msg, { ...fields, ...f }),
    info: (msg, f) => log.info(msg, { ...fields, ...f }),
    warn: (msg, f) => log.warn(msg, { ...fields, ...f }),
    error: (msg, f) => log.error(msg, { ...fields, ...f }),
  };
}

/** For tests and library use: drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
