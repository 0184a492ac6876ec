/**
 * nginx error log lines -> Logger calls. nginx writes `2026/01/01 10:00:00 [warn] 12#12: *3 text`
 * (and `nginx: [emerg] text` before its log is set up); the level maps onto ours.
 */
import type { Logger } from '../log';

export interface NginxLogLine {
  level: string;
  message: string;
  pid?: number;
}

const LOG_LINE = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[(\w+)\] (\d+)#\d+: (?:\*\d+ )?(.*)$/;
const EARLY_LINE = /^nginx: \[(\w+)\] (.*)$/;

export function parseLogLine(line: string): NginxLogLine | undefined {
  const m = LOG_LINE.exec(line);
  if (m) return { level: m[1], pid: Number(m[2]), message: m[3] };
  const e = EARLY_LINE.exec(line);
  if (e) return { level: e[1], message: e[2] };
  return undefined;
}

export const FATAL_LEVELS = new Set(['emerg', 'alert', 'crit']);

export function forward(log: Logger, line: string): NginxLogLine | undefined {
  const text = line.trimEnd();
  if (!text) return undefined;
  const parsed = parseLogLine(text);
  if (!parsed) {
    log.info(text, { component: 'nginx' });
    return undefined;
  }
  const fields = { component: 'nginx', nginxLevel: parsed.level, ...(parsed.pid ? { pid: parsed.pid } : {}) };
  if (FATAL_LEVELS.has(parsed.level) || parsed.level === 'error') log.error(parsed.message, fields);
  else if (parsed.level === 'warn') log.warn(parsed.message, fields);
  else if (parsed.level === 'debug') log.debug(parsed.message, fields);
  else log.info(parsed.message, fields);
  return parsed;
}

/** Splits a stream's chunks into lines. */
export function lineSplitter(onLine: (line: string) => void): (chunk: Buffer | string) => void {
  let rest = '';
  return (chunk) => {
    rest += chunk.toString();
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) onLine(l);
  };
}

/** nginx -t output without the "syntax is ok"/"test failed" boilerplate. */
export function testMessage(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/syntax is ok|test is successful|test failed/.test(l));
  const important = lines.filter((l) => /\[(emerg|alert|crit|error)\]/.test(l));
  return (important.length ? important : lines).join('; ') || 'nginx -t failed';
}
