/**
 * Read-only SQL for the hottest requests, beside Prisma.
 *
 * Why not Prisma here: measured in one process, a Prisma 7 query costs 0.3-0.4 ms of JavaScript
 * (plan lookup, plan interpretation, the driver adapter preparing the statement anew each time)
 * where the same row read through a prepared statement kept for reuse costs ~0.03 ms; the
 * repository look-up every repository route starts with was three Prisma queries (1.2 ms of CPU
 * per request, most of GET /repos/{o}/{r}). The queries here are few, fixed and read-only; all
 * writes stay with Prisma (a second SQLite connection that writes could wait on Prisma's own
 * write lock while blocking the event loop Prisma needs to release it: reads never wait in WAL
 * mode).
 *
 * Rows come back as the records Prisma returns (same keys, Date for DateTime, booleans,
 * numbers): columns and their types are read from the generated client's data model, so a
 * column added to the schema is picked up here too.
 *
 * SQLite: a second, read-only connection to the same file (WAL: it sees every committed write,
 * never blocks). PostgreSQL: a small pool of its own with named (server-side prepared)
 * statements.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { Pool, types as pgTypes } from 'pg';
import { providerOf } from '../config';
import { sqlitePath, statementObserver, type Prisma } from './database';
import type { Issue, Webhook } from '../../generated/prisma/client';
import type { SqlCondition } from './permissions';
import type { Repository, User } from './records';
import { WATCHING_SQL } from './watches';

type FieldType = 'Int' | 'BigInt' | 'String' | 'Boolean' | 'DateTime' | 'Float' | 'Json' | 'Bytes' | 'Decimal';
interface RuntimeField {
  name: string;
  kind: string;
  type: string;
}
interface RuntimeDataModel {
  models: Record<string, { fields: RuntimeField[] }>;
}

export type Row = Record<string, unknown>;

/** The scalar columns of a model and a decoder from a row of aliased columns to the record. */
export interface ModelColumns<T> {
  /** `"alias"."col" AS "prefix_col", ...` for a SELECT list. */
  select(alias: string, prefix: string): string;
  decode(row: Row, prefix: string): T;
}

interface Engine {
  all(name: string, sql: string, params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

function sqliteEngine(file: string): Engine {
  let db: Database | null = null;
  const statements = new Map<string, ReturnType<Database['prepare']>>();
  return {
    async all(name, sql, params) {
      if (!db) {
        db = new Database(file, { readonly: true, fileMustExist: true });
        db.pragma('busy_timeout = 5000');
      }
      let stmt = statements.get(name);
      if (!stmt) {
        stmt = db.prepare(sql);
        statements.set(name, stmt);
      }
      return stmt.all(...params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p))) as Row[];
    },
    async close() {
      db?.close();
      db = null;
      statements.clear();
    },
  };
}

/** int8 as a number (the ids and counters are BIGINT), TIMESTAMP(3) (Prisma writes UTC) as a Date. */
const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    if (oid === 1114) return (v: string) => new Date(`${v.replace(' ', 'T')}Z`);
    return pgTypes.getTypeParser(oid, format as 'text');
  },
};

function pgEngine(url: string): Engine {
  const pool = new Pool({ connectionString: url, max: 4, types: PG_TYPES as never });
  // An idle connection the server ends (restart, failover, pg_terminate_backend) is dropped by
  // the pool and the next query opens another; unheard, its 'error' event would end the process.
  pool.on('error', () => undefined);
  const texts = new Map<string, string>();
  return {
    async all(name, sql, params) {
      let text = texts.get(name);
      if (text === undefined) {
        let n = 0;
        text = sql.replace(/\?/g, () => `$${++n}`);
        texts.set(name, text);
      }
      return (await pool.query({ name: `fast_${name}`, text, values: params })).rows as Row[];
    },
    close: () => pool.end(),
  };
}

export class FastReads {
  private readonly engine: Engine;
  private readonly provider: 'sqlite' | 'postgresql';
  private readonly model: RuntimeDataModel;
  private readonly columns = new Map<string, ModelColumns<unknown>>();

  constructor(databaseUrl: string, prisma: Prisma) {
    this.provider = providerOf(databaseUrl);
    this.engine = this.provider === 'postgresql' ? pgEngine(databaseUrl) : sqliteEngine(sqlitePath(databaseUrl));
    this.model = (prisma as unknown as { _runtimeDataModel: RuntimeDataModel })._runtimeDataModel;
    this.observe = statementObserver(prisma);
  }

  private readonly observe: ((sql: string) => void) | undefined;

  /** Rows of a named read-only statement (`?` placeholders; the name keys the prepared statement). */
  all(name: string, sql: string, params: unknown[]): Promise<Row[]> {
    this.observe?.(sql);
    return this.engine.all(name, sql, params);
  }

  /** `column IN (list)` for a list of ids as one bound parameter, so one statement serves any length. */
  inList(column: string): string {
    return this.provider === 'postgresql' ? `${column} = ANY(?::bigint[])` : `${column} IN (SELECT value FROM json_each(?))`;
  }

  /** The bound value for inList(). */
  listParam(ids: number[]): unknown {
    return this.provider === 'postgresql' ? ids : JSON.stringify(ids);
  }

  /** Columns of a Prisma model (scalar fields, in the model's order). */
  of<T>(modelName: string): ModelColumns<T> {
    const known = this.columns.get(modelName);
    if (known) return known as ModelColumns<T>;
    const model = this.model.models[modelName];
    if (!model) throw new Error(`no model ${modelName}`);
    const fields = model.fields.filter((f) => f.kind === 'scalar').map((f) => ({ name: f.name, type: f.type as FieldType }));
    const sqlite = this.provider === 'sqlite';
    const cols: ModelColumns<T> = {
      select: (alias, prefix) => fields.map((f) => `"${alias}"."${f.name}" AS "${prefix}${f.name}"`).join(', '),
      decode(row, prefix) {
        const out: Row = {};
        for (const f of fields) {
          const v = row[prefix + f.name];
          if (v === null || v === undefined) out[f.name] = null;
          else if (f.type === 'Boolean') out[f.name] = sqlite ? v === 1 || v === 1n || v === true : v;
          else if (f.type === 'DateTime') out[f.name] = v instanceof Date ? v : new Date(v as string);
          else if (f.type === 'BigInt') out[f.name] = BigInt(v as number);
          // SQLite hands integers back as bigint through some drivers (Prisma's raw queries).
          else if (f.type === 'Int' && typeof v === 'bigint') out[f.name] = Number(v);
          else out[f.name] = v;
        }
        return out as T;
      },
    };
    this.columns.set(modelName, cols as ModelColumns<unknown>);
    return cols;
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/* ------------------------------------------------------------------ the hot queries */

export type RepoRow = Repository & { owner: User };

/**
 * The queries of the hot paths: the repository of a route with its owner and the caller's
 * collaboration (every repository route), and what the notifier's listeners read after an
 * issue or a comment is created (watchers, participants, their users, hooks, threads).
 */
export class HotReads extends FastReads {
  /** The repository `owner/name` (case-insensitive), its owner, and `userId`'s collaboration mode (null: none). */
  async repoByName(owner: string, name: string, userId: number | null): Promise<{ repo: RepoRow; collabMode: number | null } | null> {
    const r = this.of<Repository>('Repository');
    const u = this.of<User>('User');
    const rows = await this.all(
      'repo_by_name',
      `SELECT ${r.select('r', 'r_')}, ${u.select('u', 'u_')},
        (SELECT c."mode" FROM "Collaboration" c WHERE c."repoId" = r."id" AND c."userId" = ?) AS "collab_mode"
       FROM "Repository" r JOIN "User" u ON u."id" = r."ownerId"
       WHERE r."lowerName" = ? AND u."lowerName" = ?`,
      [userId ?? -1, name.toLowerCase(), owner.toLowerCase()],
    );
    if (!rows.length) return null;
    const row = rows[0];
    return { repo: { ...r.decode(row, 'r_'), owner: u.decode(row, 'u_') }, collabMode: row.collab_mode === null || row.collab_mode === undefined ? null : Number(row.collab_mode) };
  }

  async usersByIds(ids: number[]): Promise<User[]> {
    if (!ids.length) return [];
    const u = this.of<User>('User');
    const rows = await this.all('users_by_ids', `SELECT ${u.select('u', '')} FROM "User" u WHERE ${this.inList('u."id"')}`, [this.listParam(ids)]);
    return rows.map((row) => u.decode(row, ''));
  }

  /** Users watching the repository (Gitea's watch modes normal and auto). */
  async watcherIds(repoId: number): Promise<number[]> {
    const rows = await this.all('watcher_ids', `SELECT w."userId" AS "userId" FROM "Watch" w WHERE w."repoId" = ? AND w."mode" IN (${WATCHING_SQL})`, [repoId]);
    return rows.map((row) => Number(row.userId));
  }

  async issueWatches(issueId: number): Promise<{ userId: number; isWatching: boolean }[]> {
    const rows = await this.all('issue_watches', `SELECT w."userId" AS "userId", w."isWatching" AS "isWatching" FROM "IssueWatch" w WHERE w."issueId" = ?`, [issueId]);
    return rows.map((row) => ({ userId: Number(row.userId), isWatching: row.isWatching === true || row.isWatching === 1 }));
  }

  /** Distinct posters of plain comments on the issue. */
  async commenterIds(issueId: number): Promise<number[]> {
    const rows = await this.all('commenter_ids', `SELECT DISTINCT c."posterId" AS "posterId" FROM "Comment" c WHERE c."issueId" = ? AND c."type" = 0`, [issueId]);
    return rows.map((row) => Number(row.posterId));
  }

  /** The user's notification thread of an issue, if any. */
  async notificationThread(userId: number, issueId: number): Promise<{ id: number; status: number } | null> {
    const rows = await this.all('notification_thread', `SELECT n."id" AS "id", n."status" AS "status" FROM "Notification" n WHERE n."userId" = ? AND n."issueId" = ?`, [userId, issueId]);
    return rows.length ? { id: Number(rows[0].id), status: Number(rows[0].status) } : null;
  }

  /** Active webhooks of a repository: its own, its owner's and the system's, by id. */
  async activeHooks(repoId: number, ownerId: number): Promise<Webhook[]> {
    const h = this.of<Webhook>('Webhook');
    const rows = await this.all(
      'active_hooks',
      `SELECT ${h.select('h', '')} FROM "Webhook" h
       WHERE h."active" = ? AND (h."repoId" = ? OR (h."ownerId" = ? AND h."repoId" IS NULL) OR (h."repoId" IS NULL AND h."ownerId" IS NULL AND h."isSystem" = ?))
       ORDER BY h."id"`,
      [true, repoId, ownerId, true],
    );
    return rows.map((row) => h.decode(row, ''));
  }

  async issueByIndex(repoId: number, index: number): Promise<Issue | null> {
    const i = this.of<Issue>('Issue');
    const rows = await this.all('issue_by_index', `SELECT ${i.select('i', '')} FROM "Issue" i WHERE i."repoId" = ? AND i."index" = ?`, [repoId, index]);
    return rows.length ? i.decode(rows[0], '') : null;
  }

  /**
   * One page of repositories with their owners, and how many match: `where` is a condition over
   * the repository aliased `r`, `orderBy` its ORDER BY list. Two prepared statements per shape
   * of condition (the shape, not the values, names them), whatever the page holds.
   */
  async repoPage(where: SqlCondition | null, orderBy: string, skip: number, take: number): Promise<{ rows: RepoRow[]; total: number }> {
    const cond = where?.sql ?? '1 = 1';
    const params = where?.params ?? [];
    const key = this.shapeKey(`${cond}\n${orderBy}`);
    const r = this.of<Repository>('Repository');
    const u = this.of<User>('User');
    const [counted, rows] = await Promise.all([
      this.all(`repo_count_${key}`, `SELECT COUNT(*) AS "n" FROM "Repository" r WHERE ${cond}`, params),
      this.all(
        `repo_page_${key}`,
        `SELECT ${r.select('r', 'r_')}, ${u.select('u', 'u_')} FROM "Repository" r JOIN "User" u ON u."id" = r."ownerId" WHERE ${cond} ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
        [...params, take, skip],
      ),
    ]);
    return { rows: rows.map((row) => ({ ...r.decode(row, 'r_'), owner: u.decode(row, 'u_') })), total: Number(counted[0].n) };
  }

  private readonly shapes = new Map<string, string>();

  /** A short stable name for a generated statement (PostgreSQL keeps 63 bytes of a statement name). */
  private shapeKey(sql: string): string {
    let key = this.shapes.get(sql);
    if (!key) {
      key = createHash('sha1').update(sql).digest('hex').slice(0, 16);
      this.shapes.set(sql, key);
    }
    return key;
  }
}
