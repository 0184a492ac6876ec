// The few better-sqlite3 calls the migration runner and services/fast-reads.ts make (the package ships no types and it
// comes with @prisma/adapter-better-sqlite3, so it is not worth a @types dependency).
declare module 'better-sqlite3' {
  interface Statement {
    run(...params: unknown[]): { changes: number };
    all(...params: unknown[]): unknown[];
    get(...params: unknown[]): unknown;
  }
  class Database {
    constructor(file: string, options?: { readonly?: boolean; fileMustExist?: boolean });
    pragma(source: string): unknown;
    exec(sql: string): this;
    prepare(sql: string): Statement;
    transaction<T extends (...args: never[]) => unknown>(fn: T): T;
    close(): void;
  }
  export = Database;
}
