/*
 * The one SQL interface the lifecycle store speaks, async so that a backend whose driver is
 * async only (PostgreSQL through `pg`, issue 19) can sit behind it. SQL is written with
 * positional `?` parameters; a backend that numbers them (`$1`) rewrites them itself.
 */

export type Dialect = "sqlite" | "postgres";

export type Params = readonly unknown[];

export interface RunInfo {
  /** Rows the statement changed. */
  changes: number;
  /** The rowid (SQLite) or the returned id (PostgreSQL, `RETURNING`) of the row inserted last. */
  lastInsertRowid: number;
}

/** Statements, on the connection or inside a transaction. */
export interface SqlRunner {
  readonly dialect: Dialect;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  run(sql: string, params?: Params): Promise<RunInfo>;
  /** Several statements without parameters (migrations, test fixtures). */
  exec(sql: string): Promise<void>;
}

/**
 * `immediate` takes the write lock when the transaction begins, so that every check it makes is
 * made under the lock that its write needs (SQLite's BEGIN IMMEDIATE; the default). `deferred`
 * takes it at the first write.
 */
export type TxMode = "immediate" | "deferred";

export interface SqlDb extends SqlRunner {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it rejects.
   * Statements made inside `fn`'s async flow belong to the transaction whether they go through
   * `tx` or through this object (so a store function called inside works unchanged); other
   * flows of the process wait until it ends. A transaction inside one is a savepoint.
   */
  tx<T>(fn: (tx: SqlRunner) => Promise<T>, mode?: TxMode): Promise<T>;
  /** Whether the calling async flow is inside a transaction on this connection. */
  readonly inTransaction: boolean;
  readonly isOpen: boolean;
  /** A connection that refuses writes (read-only mode, or the empty placeholder). */
  readonly readOnly: boolean;
  /** The schema version recorded in the database (0: none yet). */
  schemaVersion(): Promise<number>;
  setSchemaVersion(version: number): Promise<void>;
  /** Whether the database holds any table at all (a file being initialised holds none). */
  hasTables(): Promise<boolean>;
  /**
   * A number that moves whenever another connection commits; null when the backend cannot tell
   * (then a poller must read instead). What the studio polls to learn that something changed.
   */
  changeStamp(): Promise<number | null>;
  /**
   * PostgreSQL only: wakes `onPayload` on each NOTIFY on `channel` until the returned function
   * is called; `onLost` when the listening connection goes (notifications meanwhile are lost).
   */
  listen?(channel: string, onPayload: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: whether wake-ups can LISTEN and by which route (the listen URL beside a
   * pooled store, or the store's own URL), found by opening a listen connection and closing it.
   */
  wakeups?(): Promise<{ listening: boolean; via: "store_listen" | "store"; error: unknown }>;
  /**
   * SQLite only: wakes `onCommit` whenever the database's file or its WAL is written (by any
   * process) until the returned function is called; null where the file cannot be watched.
   */
  watchCommits?(onCommit: () => void): (() => void) | null;
  close(): Promise<void>;
}

/** Whether `err` is the backend's report of a uniqueness (or primary key) violation. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // SQLite's extended codes; PostgreSQL's SQLSTATE 23505.
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}
