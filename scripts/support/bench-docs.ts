/**
 * The benchmark tables of docs/benchmarks-gateway.md and docs/benchmarks-forge.md, written by
 * the bench scripts themselves: run one with `--write-docs` (e.g. `npm run bench:agent --
 * --write-docs`) and, once it has printed its figures as usual, it replaces its own table
 * between `<!-- bench:ID:begin -->` and `<!-- bench:ID:end -->`. Each table says which commit,
 * date and machine its figures come from, so the docs hold one current table per benchmark and
 * never a log of runs.
 *
 *   docsTable({ doc: 'gateway', id: 'agent', command: 'npm run bench:agent',
 *     columns: ['figure', 'Portcullis', 'goal', 'anchor'], rows: [['create -> served p50', '96 ms', '< 250 ms', '']] });
 *
 * Without `--write-docs` it does nothing, so a script's printed output is the same either way.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const WRITE_DOCS = process.argv.includes('--write-docs');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DOCS = { gateway: 'docs/benchmarks-gateway.md', forge: 'docs/benchmarks-forge.md' } as const;

export interface DocsTable {
  doc: keyof typeof DOCS;
  /** The marker name: `<!-- bench:ID:begin -->`. */
  id: string;
  /** The command that produced the figures (with its options). */
  command: string;
  columns: string[];
  rows: Array<Array<string | number>>;
  /** One line under the table: what the figures mean, where they can mislead. */
  note?: string;
}

/** `BENCH_...=... npm run <script> -- <options>`: this run's knobs, for the table's first line. */
export function benchCommand(script: string): string {
  const env = Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v} `).join('');
  const options = process.argv.slice(2).filter((a) => a !== '--write-docs');
  return `${env}npm run ${script}${options.length ? ` -- ${options.join(' ')}` : ''}`;
}

/** Commit, date and machine of this run, as the table's first line says them. */
export function runContext(): string {
  let commit = 'unknown commit';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    // The docs files themselves change as a run writes its tables: they do not count.
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!docs'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    if (dirty) commit += ' + local changes';
  } catch {
    // not a git checkout: the table says so
  }
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cpu = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' / ');
  return `commit \`${commit}\`, ${date} UTC, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), load average ${load} (1 / 5 / 15 min) at the end of the run`;
}

/** Columns and rows from the records a script prints with console.table (the first record's keys). */
export function recordsTable(records: Array<Record<string, unknown>>): Pick<DocsTable, 'columns' | 'rows'> {
  const columns = Object.keys(records[0] ?? {});
  return { columns, rows: records.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c])))) };
}

const cell = (v: string | number) => String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown block between the markers (markers included). */
export function renderTable(t: DocsTable, context = runContext()): string {
  const lines = [
    `<!-- bench:${t.id}:begin -->`,
    `\`${t.command}\`: ${context}.`,
    '',
    `| ${t.columns.map(cell).join(' | ')} |`,
    `|${t.columns.map(() => '---').join('|')}|`,
    ...t.rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
  if (t.note) lines.push('', t.note);
  lines.push(`<!-- bench:${t.id}:end -->`);
  return lines.join('\n');
}

/** Replaces the table's block in its docs file (only with --write-docs). */
export function docsTable(t: DocsTable): void {
  if (!WRITE_DOCS) return;
  const file = path.join(REPO_ROOT, DOCS[t.doc]);
  const text = fs.readFileSync(file, 'utf8');
  const begin = `<!-- bench:${t.id}:begin -->`;
  const end = `<!-- bench:${t.id}:end -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end, from);
  const block = renderTable(t);
  const next = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, next);
  process.stderr.write(`${DOCS[t.doc]}: table ${t.id} written\n`);
}
