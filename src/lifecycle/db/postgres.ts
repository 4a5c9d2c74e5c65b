import { AsyncLocalStorage } from "node:async_hooks";
import type { Pool, PoolClient, QueryResult } from "pg";
import { LiError } from "../../errors.js";
import { importModule } from "../../packages.js";
import { isUnreachable, pgFailure, type PgFailure } from "./pg-errors.js";
import { PgListener, type ListenRoute } from "./pg-listen.js";
import { redactUrl, scrubSecret, toPostgres, URL_SPECIALS } from "./pg-sql.js";
import type { Params, RunInfo, SqlDb, SqlRunner, TxMode } from "./types.js";

/*
 * The PostgreSQL backend of the store interface, through node-postgres's pool (loaded only
 * here, only when a store URL names PostgreSQL).
 *
 * SQLite gives li one writer at a time, and three checks rely on it (the queue cap and claim,
 * queue_seq = max + 1, a parent not terminal on insert) besides every compare-and-set. So a
 * write transaction here takes one transaction-scoped advisory lock first: writers take turns
 * across every host, as SQLite's writers do across processes, and each check keeps the meaning
 * it has there. Reads take no lock (MVCC). A single write outside a transaction runs as one.
 */

/** The advisory lock every write transaction holds: "li" and a version, as one 64-bit key. */
export const WRITE_LOCK = 0x6c69_0001;

interface Frame {
  db: PostgresDb;
  client: PoolClient;
  active: boolean;
}

const frames = new AsyncLocalStorage<Frame>();

/**
 * How each transaction begins, in one simple query (one round trip, no prepared statement, so a
 * pooler with or without protocol-level prepared statements passes it as it is).
 *
 * A write transaction asks for synchronous_commit = on for itself: a commit li was told of must
 * survive a server crash (a run's end once recorded stays), and a database set to
 * synchronous_commit = off may forget the last commits it acknowledged. SET LOCAL lasts until
 * this transaction's end, so it holds behind a transaction-mode pooler and leaves nothing on the
 * server connection for its next borrower. An immediate one takes the write lock too.
 */
export const BEGIN_WRITE = "BEGIN; SET LOCAL synchronous_commit = on";
const BEGIN_IMMEDIATE = `${BEGIN_WRITE}; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`;
/** A reader's transaction (li studio's): the server refuses any write in it, DDL included. */
export const BEGIN_READ_ONLY = "BEGIN READ ONLY";

/** Where a failure to use the store comes from, the detail's stable reason, and what to do about it. */
const FAILURES: Record<PgFailure, { what: string; reason: string; todo: string }> = {
  unreachable: { what: "cannot be reached", reason: "store_unreachable", todo: "check that the server is up and that LI_STORE (or store: in settings.yaml) names it" },
  credentials: { what: "refused li's credentials", reason: "store_credentials", todo: `check the user and password in LI_STORE (or store: in settings.yaml), with special characters in the password percent-encoded (${URL_SPECIALS}), and the server's pg_hba.conf` },
  no_database: { what: "has no such database", reason: "store_no_database", todo: "create it (createdb), or name an existing one in LI_STORE (or store: in settings.yaml)" },
  pooler_refused: {
    what: "is a connection pooler that refused a startup parameter li's URL carries",
    reason: "store_pooler_refused",
    todo: "li sends none of its own (docs/hosts.md, Behind a connection pooler): take options (and any other startup setting) out of LI_STORE (or store: in settings.yaml), or let the pooler pass it (PgBouncer: ignore_startup_parameters)",
  },
  pool_exhausted: {
    what: "has no connection free for li: its pooler's pool (or the server's max_connections) is exhausted",
    reason: "store_pool_exhausted",
    todo: "give the pool more server connections (PgBouncer: default_pool_size, max_client_conn, query_wait_timeout; Supavisor or Neon: the pool size in the project's settings) or the server more max_connections, or run fewer li processes at once; a run's worker retries its writes meanwhile",
  },
};

declare const __liBundle: ((name: string) => unknown) | undefined;

let pgModule: Promise<typeof import("pg").default> | undefined;
/** node-postgres once loaded (a store is connected only after it is). */
let loadedPg: typeof import("pg").default | undefined;
/**
 * node-postgres asks as it loads whether it runs in a Cloudflare Worker: with no global
 * navigator (Node 20 has none) it builds a fetch Response to find out, which loads undici, about
 * 60 ms of every command on a shared store. A navigator lent while it loads answers at once.
 */
function loadPg(): Promise<typeof import("pg").default> {
  return (pgModule ??= (async () => {
    const lend = !("navigator" in globalThis);
    if (lend) Object.defineProperty(globalThis, "navigator", { value: { userAgent: `Node.js/${process.versions.node}` }, configurable: true, writable: true });
    try {
      // Under the CLI's launcher, node-postgres is one bundle run from its code cache (scripts/bundle-pg.mjs).
      if (typeof __liBundle === "function") return (loadedPg = __liBundle("pg") as typeof import("pg").default);
      return (loadedPg = (await importModule<typeof import("pg")>("pg")).default);
    } finally {
      if (lend) delete (globalThis as { navigator?: unknown }).navigator;
    }
  })());
}

export class PostgresDb implements SqlDb {
  readonly dialect = "postgres" as const;
  private savepoints = 0;
  private closed = false;
  /** The process's one LISTEN connection, made at the first listen (pg-listen.ts). */
  private listener: PgListener | null = null;

  private constructor(
    private readonly pool: Pool,
    /** The URL as given: never printed, only taken out of what is (see unavailable). */
    private readonly url: string,
    /** The URL without its password: what errors name. */
    readonly where: string,
    /** Every transaction read-only, by the server's own rule (li studio's connection). */
    readonly readOnly: boolean,
    /**
     * The schema version read by connect's probe, or null when that read could not say (no
     * meta table yet, someone else's): then openPostgresStore checks the long way.
     */
    readonly probedVersion: number | null = null,
    /** Where this store's LISTEN goes: LI_STORE_LISTEN's direct connection, or the store's own URL. */
    readonly listenRoute: ListenRoute = { via: "store", url },
  ) {}

  /** A pool on `url`, connected once so that an unreachable server is said now, not at the first write. */
  static async connect(url: string, opts: { readOnly?: boolean; listen?: { url: string; source: string }; pooled?: boolean } = {}): Promise<PostgresDb> {
    const pg = await loadPg();
    const where = redactUrl(url);
    // int8 and numeric as numbers, as SQLite's integers and reals arrive: li's counts and sums fit.
    const types = {
      getTypeParser: (oid: number, format?: any) =>
        oid === 20 ? (v: string) => Number(v) : oid === 1700 ? (v: string) => Number.parseFloat(v) : pg.types.getTypeParser(oid, format),
    };
    const pool = new pg.Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      application_name: "li",
      // No startup `options` (issue 49): a transaction-mode pooler (PgBouncer, Supavisor, Neon's)
      // refuses them or drops them without a word, and a setting on the connection would not
      // follow li's next transaction to whichever server connection the pooler lends it. What li
      // relies on is set inside each transaction instead (BEGIN_WRITE, BEGIN_READ_ONLY).
      types,
    } as any);
    // A pooled connection the server drops while idle (a restart) is not this process's crash.
    pool.on("error", () => {});
    // The probe that says now whether the server is usable reads the schema version too, so a store
    // at this li's version opens in one round trip (a read's whole cost, on every MCP op).
    let probed: number | null = null;
    try {
      const { rows } = await pool.query("SELECT value FROM meta WHERE key = 'schema_version'");
      probed = rows[0] ? Number(rows[0].value) : null;
    } catch (err) {
      // A server that answers with an SQL error (no meta table yet: a new or someone else's
      // database) is usable; openPostgresStore checks it the long way.
      if (pgFailure(err)) {
        await pool.end().catch(() => {});
        throw new PostgresDb(pool, url, where, !!opts.readOnly).unavailable(err);
      }
    }
    const route: ListenRoute = opts.listen ? { via: "store_listen", ...opts.listen } : { via: "store", url, pooled: opts.pooled };
    return new PostgresDb(pool, url, where, !!opts.readOnly, probed, route);
  }

  /** The contract's error for a server li cannot use, naming it without its password. */
  unavailable(err: unknown): unknown {
    const failure = err instanceof LiError ? null : pgFailure(err);
    if (!failure) return err;
    const code = (err as { code?: string }).code;
    // The driver's words, with the password taken out should it ever quote the URL.
    const message = scrubSecret((err as Error).message, this.url);
    const { what, reason, todo } = FAILURES[failure];
    return new LiError("unavailable", `the PostgreSQL store at ${this.where} ${what} (${message}); ${todo}`, {
      store: this.where,
      code: code ?? null,
      reason,
      remedy: todo,
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  get inTransaction(): boolean {
    return this.frame() !== undefined;
  }

  private frame(): Frame | undefined {
    const f = frames.getStore();
    return f && f.db === this && f.active ? f : undefined;
  }

  private async query(sql: string, params: Params): Promise<{ result: QueryResult; returns?: string }> {
    const stmt = toPostgres(sql);
    const f = this.frame();
    // A reader's every statement is in a read-only transaction of its own: nothing on the
    // connection says so, as a pooler may lend the next statement another server connection.
    if (!f && this.readOnly) return this.tx(() => this.query(sql, params), "deferred");
    try {
      const result = f ? await f.client.query(stmt.text, params as unknown[]) : await this.pool.query(stmt.text, params as unknown[]);
      return { result, returns: stmt.returns };
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  async get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.query(sql, params)).result.rows[0] as T | undefined;
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    return (await this.query(sql, params)).result.rows as T[];
  }

  async run(sql: string, params: Params = []): Promise<RunInfo> {
    // A write on its own is a transaction of its own, in its turn with every other writer.
    if (!this.frame() && /^\s*(INSERT|UPDATE|DELETE)\b/i.test(sql)) return this.tx(() => this.run(sql, params));
    const { result, returns } = await this.query(sql, params);
    const id = returns ? Number(result.rows.at(-1)?.[returns] ?? 0) : 0;
    return { changes: result.rowCount ?? 0, lastInsertRowid: id };
  }

  async exec(sql: string): Promise<void> {
    const f = this.frame();
    if (!f && this.readOnly) return this.tx(() => this.exec(sql), "deferred");
    try {
      // A simple query: several statements at once, as SQLite's exec.
      if (f) await f.client.query(sql);
      else await this.pool.query(sql);
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  async tx<T>(fn: (tx: SqlRunner) => Promise<T>, mode: TxMode = "immediate"): Promise<T> {
    const outer = this.frame();
    if (outer) return this.savepoint(outer, fn);
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.unavailable(err);
    }
    const frame: Frame = { db: this, client, active: true };
    let broken: unknown;
    // The server going away between two statements (a restart) is emitted on the client, which
    // the pool listens to only while idle: unheard, it would end the process. The next statement
    // fails with it, and the client is then discarded.
    const lost = (err: Error) => (broken ??= err);
    client.on("error", lost);
    try {
      await client.query(this.readOnly ? BEGIN_READ_ONLY : mode === "immediate" ? BEGIN_IMMEDIATE : BEGIN_WRITE);
      const result = await frames.run(frame, () => fn(this));
      frame.active = false;
      await client.query("COMMIT");
      return result;
    } catch (err) {
      frame.active = false;
      // A failed COMMIT leaves the outcome unknown to us; the caller re-reads to settle it.
      await client.query("ROLLBACK").catch((e) => (broken = e));
      if (isUnreachable(err) || (err instanceof LiError && err.detail.reason === "store_unreachable")) broken ??= err;
      throw this.unavailable(err);
    } finally {
      frame.active = false;
      client.off("error", lost);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  private async savepoint<T>(outer: Frame, fn: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const name = `li_sp${++this.savepoints}`;
    await outer.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn(this);
      await outer.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await outer.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
      throw err;
    }
  }

  async schemaVersion(): Promise<number> {
    // pg_tables is read under the statement's snapshot; to_regclass reads the catalog cache,
    // which can miss a table another transaction just committed (two first users at once).
    const exists = await this.get("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'meta'");
    if (!exists) return 0;
    const row = await this.get<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'");
    return row ? Number(row.value) : 0;
  }

  async setSchemaVersion(version: number): Promise<void> {
    await this.run("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(Math.trunc(version))]);
  }

  async hasTables(): Promise<boolean> {
    return !!(await this.get("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() LIMIT 1"));
  }

  /** PostgreSQL has no cheap "something committed" counter: a poller reads instead. */
  async changeStamp(): Promise<number | null> {
    return null;
  }

  /**
   * Calls `onPayload` with each NOTIFY on `channel` (a fixed identifier, never user input) until
   * the returned function is called, on the process's one LISTEN connection (pg-listen.ts): the
   * listen URL's beside a pooled store, else the store's own when it reaches PostgreSQL itself; a
   * pooler is refused (li polls). A notification sent while that connection was down is lost, and
   * `onLost` says it went: a listener is only a wake-up, and its user polls besides.
   */
  async listen(channel: string, onPayload: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>> {
    try {
      return await this.listenerOf().subscribe(channel, onPayload, onLost);
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  /** Whether this store's wake-ups can LISTEN, and by which route: a connection opened, checked and closed (li doctor). */
  async wakeups(): Promise<{ listening: boolean; via: ListenRoute["via"]; error: unknown }> {
    const l = new PgListener(this.listenRoute, (u) => this.newListenClient(u));
    try {
      await (await l.open()).end();
      return { listening: true, via: this.listenRoute.via, error: null };
    } catch (err) {
      return { listening: false, via: this.listenRoute.via, error: this.unavailable(err) };
    }
  }

  private listenerOf(): PgListener {
    return (this.listener ??= new PgListener(this.listenRoute, (u) => this.newListenClient(u)));
  }

  private newListenClient(url: string) {
    const pg = loadedPg!;
    return new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true, application_name: "li listen" } as any);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.end();
    await this.pool.end().catch(() => {});
  }
}
