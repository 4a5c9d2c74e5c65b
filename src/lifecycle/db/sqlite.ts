import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Database from "better-sqlite3";
import { packageRoot } from "../../entrypoints.js";
import type { Params, RunInfo, SqlDb, SqlRunner, TxMode } from "./types.js";

/*
 * The SQLite backend of the store interface: better-sqlite3, whose calls are synchronous, behind
 * the async interface. The only module that imports the driver.
 *
 * better-sqlite3's own transaction helper cannot span an `await`, so transactions are explicit
 * (BEGIN IMMEDIATE … COMMIT, ROLLBACK on failure, as that helper does), and because one
 * connection has one transaction, the flows of a process take turns: a flow inside a
 * transaction owns the connection (AsyncLocalStorage tells its statements apart), and any other
 * flow's statement or transaction waits for it to end. Cross-process writers are held off by
 * SQLite's own lock and busy timeout, as before.
 */

/*
 * The driver's JavaScript is bundled into the CLI; its native addon is loaded directly, which
 * spares every command the `bindings` package's search for it, and from this package's own
 * node_modules by path, which spares the resolver's walk (an install whose dependencies were
 * hoisted elsewhere falls back to the resolver).
 */
const ADDON = "better-sqlite3/build/Release/better_sqlite3.node";
let addon: object | undefined;
function nativeBinding(): object {
  if (addon) return addon;
  const load = createRequire(import.meta.url);
  const own = path.join(packageRoot(), "node_modules", ADDON);
  return (addon = fs.existsSync(own) ? load(own) : load(ADDON));
}

/** A raw connection on a file, or on a private in-memory copy when given the file's bytes. */
export function openDatabase(source: string | Buffer, opts: { readonly?: boolean; fileMustExist?: boolean } = {}): Database.Database {
  // The driver takes the loaded addon as well as a path (its typings name only the path).
  return new Database(source, { ...opts, nativeBinding: nativeBinding() as unknown as string });
}

const isBusy = (err: any) => String(err?.code).startsWith("SQLITE_BUSY");

/** Runs `fn`, retrying for up to ~5 s while SQLite reports the database busy or locked. */
export function retryBusy<T>(fn: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err: any) {
      if (!isBusy(err) || attempt >= 100) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30);
    }
  }
}

/** retryBusy for an async step (the same attempts and pauses; the pause does not block the process). */
export async function retryBusyAsync<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err: any) {
      if (!isBusy(err) || attempt >= 100) throw err;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    }
  }
}

/** A FIFO lock: the turn of one flow on the connection. */
class Turn {
  private queue: (() => void)[] = [];
  held = false;

  async acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }
}

interface Frame {
  db: SqliteDb;
  active: boolean;
}

/** Which transaction (if any) the running async flow is inside. */
const frames = new AsyncLocalStorage<Frame>();

/** Prepared statements kept per connection; far more than li's distinct SQL texts. */
const STATEMENT_CACHE = 500;

export class SqliteDb implements SqlDb {
  readonly dialect = "sqlite" as const;
  private readonly turn = new Turn();
  private readonly statements = new Map<string, Database.Statement>();
  private savepoints = 0;

  constructor(readonly raw: Database.Database) {}

  get isOpen(): boolean {
    return this.raw.open;
  }

  get readOnly(): boolean {
    return this.raw.readonly || this.raw.pragma("query_only", { simple: true }) === 1;
  }

  get inTransaction(): boolean {
    return this.owns() && this.raw.inTransaction;
  }

  /** Whether the calling flow is inside a transaction of this connection that is still open. */
  private owns(): boolean {
    const f = frames.getStore();
    return f !== undefined && f.db === this && f.active;
  }

  private prepare(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      if (this.statements.size >= STATEMENT_CACHE) this.statements.clear();
      s = this.raw.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Runs one synchronous step in the caller's turn: at once inside its own transaction or when nobody holds one. */
  private async step<T>(fn: () => T): Promise<T> {
    if (this.owns() || !this.turn.held) return fn();
    await this.turn.acquire();
    try {
      return fn();
    } finally {
      this.turn.release();
    }
  }

  get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return this.step(() => this.prepare(sql).get(...params) as T | undefined);
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return this.step(() => this.prepare(sql).all(...params) as T[]);
  }

  run(sql: string, params: Params = []): Promise<RunInfo> {
    return this.step(() => {
      const r = this.prepare(sql).run(...params);
      return { changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
    });
  }

  exec(sql: string): Promise<void> {
    return this.step(() => void this.raw.exec(sql));
  }

  async tx<T>(fn: (tx: SqlRunner) => Promise<T>, mode: TxMode = "immediate"): Promise<T> {
    if (this.owns()) return this.savepoint(fn);
    await this.turn.acquire();
    const frame: Frame = { db: this, active: true };
    try {
      this.raw.exec(mode === "immediate" ? "BEGIN IMMEDIATE" : "BEGIN");
      try {
        const result = await frames.run(frame, () => fn(this));
        this.raw.exec("COMMIT");
        return result;
      } catch (err) {
        // As better-sqlite3's own helper: SQLite may have rolled back already (a full disk).
        if (this.raw.open && this.raw.inTransaction) this.raw.exec("ROLLBACK");
        throw err;
      }
    } finally {
      frame.active = false;
      this.turn.release();
    }
  }

  /** A nested transaction: undoes only its own writes when it fails, as better-sqlite3's nesting did. */
  private async savepoint<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const name = `li_sp${++this.savepoints}`;
    this.raw.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn(this);
      this.raw.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      if (this.raw.open && this.raw.inTransaction) {
        this.raw.exec(`ROLLBACK TO ${name}`);
        this.raw.exec(`RELEASE ${name}`);
      }
      throw err;
    }
  }

  async schemaVersion(): Promise<number> {
    return this.step(() => this.raw.pragma("user_version", { simple: true }) as number);
  }

  async setSchemaVersion(version: number): Promise<void> {
    await this.step(() => this.raw.pragma(`user_version = ${Math.trunc(version)}`));
  }

  async hasTables(): Promise<boolean> {
    return !!(await this.get("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1"));
  }

  async changeStamp(): Promise<number | null> {
    return this.step(() => this.raw.pragma("data_version", { simple: true }) as number);
  }

  watchCommits(onCommit: () => void): (() => void) | null {
    if (this.raw.memory) return null;
    const file = path.resolve(this.raw.name);
    const names = new Set([path.basename(file), `${path.basename(file)}-wal`]);
    try {
      // The directory, not the files: a checkpoint may remove the WAL and a writer make it anew.
      const watcher = fs.watch(path.dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) onCommit();
      });
      watcher.on("error", () => {});
      return () => watcher.close();
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    this.statements.clear();
    if (this.raw.open) this.raw.close();
  }
}
