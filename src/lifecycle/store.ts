import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { LiError } from "../errors.js";
import { newId, type IdKind } from "./ids.js";
import { checkHome, ensurePrivateDir, statePath, unwritableHome } from "./paths.js";
import type { AuditEvent, Entity, TransitionPatch, TransitionRequest, TransitionResult } from "./records.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { openDatabase, retryBusy } from "./sqlite.js";
import { isDiskFull } from "./storage-faults.js";
import { isLegalTransition, isTerminal, outcomeOf, type EntityKind } from "./vocab.js";

export type { AuditEvent, Entity, TransitionPatch, TransitionRequest, TransitionResult } from "./records.js";

/** Runs inside the transition's transaction for every terminal move; returns rows it enqueued. */
export interface TerminalHook {
  enqueue(store: Store, entity: Entity, from: string, eventId: number): number;
  afterCommit(count: number): void;
}

const now = () => new Date().toISOString();

/** Removes state.db (and its sidecars) only while nothing was ever written to it. */
function removeUninitialised(file: string): void {
  try {
    if (fs.statSync(file).size !== 0) return;
    fs.rmSync(file, { force: true });
    if (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size === 0) fs.rmSync(`${file}-wal`, { force: true });
    // An initialised wal-index is 32 KiB; a shorter one is what the failed open left.
    if ((fs.statSync(`${file}-shm`, { throwIfNoEntry: false })?.size ?? Infinity) < 32768) fs.rmSync(`${file}-shm`, { force: true });
  } catch {}
}

function hydrate(row: any): Entity | undefined {
  if (!row) return undefined;
  return { ...row, spec: JSON.parse(row.spec) };
}

export class Store {
  terminalHook: TerminalHook | null = null;
  /** True for the empty stand-in a read gets where no state.db exists yet (open.ts openStoreForRead). */
  placeholder = false;

  constructor(readonly db: Database.Database) {}


  /**
   * Opens $LI_HOME/state.db for reading and writing; refuses an older or newer schema unless
   * migrating. No terminal hook is installed here: lifecycle/open.ts hands the store its hook.
   */
  static open(opts: { migrating?: boolean } = {}): Store {
    checkHome();
    const file = statePath();
    try {
      ensurePrivateDir(path.dirname(file));
    } catch (err) {
      throw unwritableHome(err) ?? err;
    }
    const fresh = !fs.existsSync(file);
    let db: Database.Database | undefined;
    try {
      const conn = (db = openDatabase(file));
      // The busy timeout first: switching a fresh file to WAL takes a lock concurrent openers contend for.
      conn.pragma("busy_timeout = 15000");
      // Asked first, because setting it is a write and an existing file is already WAL.
      // SQLite can answer BUSY at once, without the busy handler, while another opener converts a
      // fresh file to WAL; that is transient, so retry it rather than fail the command.
      if (retryBusy(() => conn.pragma("journal_mode", { simple: true })) !== "wal") retryBusy(() => conn.pragma("journal_mode = WAL"));
      conn.pragma("foreign_keys = ON");
      conn.pragma("synchronous = NORMAL");
      if (fresh) fs.chmodSync(file, 0o600);
      const store = new Store(conn);
      if (store.schemaVersion() === 0) {
        // A fresh file gets the whole schema in one transaction, re-checked under the write lock:
        // a concurrent opener then sees no schema or the current one, never a half-migrated file.
        retryBusy(() =>
          store.tx(() => {
            if (store.schemaVersion() !== 0 || !store.isEmpty()) return;
            for (const step of MIGRATIONS) conn.exec(step);
            conn.pragma(`user_version = ${SCHEMA_VERSION}`);
          }),
        );
      }
      store.checkVersion(file, opts);
      return store;
    } catch (err) {
      if (db?.open) db.close();
      // A file this open created and a full disk kept it from initialising is not left behind as
      // an empty database that a later open would take for an existing one. (Only then: a
      // concurrent opener may be initialising the same new file.)
      if (fresh && isDiskFull(err)) removeUninitialised(file);
      if (fresh && (err as { code?: string })?.code === "SQLITE_CANTOPEN") throw unwritableHome(err) ?? err;
      throw err;
    }
  }

  /** Refuses a schema this li does not speak; `migrating` accepts an older one. */
  checkVersion(file: string, opts: { migrating?: boolean } = {}): void {
    const version = this.schemaVersion();
    if (version > SCHEMA_VERSION) {
      throw new LiError(
        "unavailable",
        `state.db is at schema version ${version}, newer than this li understands (${SCHEMA_VERSION}); upgrade li`,
        { path: file, schema_version: version, supported: SCHEMA_VERSION },
      );
    } else if (version < SCHEMA_VERSION && !opts.migrating) {
      throw new LiError(
        "unavailable",
        `state.db is at schema version ${version}; this li needs ${SCHEMA_VERSION}. Run \`li state migrate\` to upgrade it`,
        { path: file, schema_version: version, required: SCHEMA_VERSION, remedy: "li state migrate" },
      );
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  schemaVersion(): number {
    return this.db.pragma("user_version", { simple: true }) as number;
  }

  private isEmpty(): boolean {
    return !this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").get();
  }

  /** Applies every pending migration, each in its own transaction. Returns the versions applied. */
  migrate(target = SCHEMA_VERSION): number[] {
    const applied: number[] = [];
    for (;;) {
      // The version is read under the write lock: a concurrent opener may have migrated
      // the same fresh file between our read and our lock, and a step must not run twice.
      const next = this.db.transaction((): number | null => {
        const v = this.schemaVersion();
        if (v >= target) return null;
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
        return v + 1;
      }).immediate();
      if (next === null) return applied;
      applied.push(next);
    }
  }

  /** An immediate transaction: takes the write lock up front so the busy timeout applies. */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  insert(input: {
    kind: EntityKind;
    parent_id?: string | null;
    label?: string | null;
    status?: "preparing" | "queued";
    spec?: Record<string, unknown>;
    run_dir?: (id: string) => string;
    id?: string;
    /** Enqueue under a parallelism limit: recorded `queued` with the next submission sequence number. */
    queue?: { name: string | null };
  }): Entity {
    const id = input.id ?? newId(input.kind as IdKind);
    const at = now();
    return this.tx(() => {
      if (input.parent_id) {
        const parent = this.get(input.parent_id);
        if (!parent) throw new LiError("not_found", `parent ${input.parent_id} does not exist`);
        // A finished parent takes no new children: kill relies on this to stop a tree growing.
        if (isTerminal(parent.status))
          throw new LiError("conflict", `parent ${parent.id} is already ${parent.status}`, { parent: parent.id });
      }
      // Under the write lock, so two submitters never draw the same place in the line.
      const seq = input.queue ? ((this.db.prepare("SELECT max(queue_seq) AS m FROM entities WHERE queue_seq IS NOT NULL").get() as { m: number | null }).m ?? 0) + 1 : null;
      this.db
        .prepare(
          `INSERT INTO entities (id, kind, parent_id, label, status, spec, created_at, updated_at, run_dir, queue, queue_seq)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          input.kind,
          input.parent_id ?? null,
          input.label ?? null,
          input.queue ? "queued" : (input.status ?? "preparing"),
          JSON.stringify(input.spec ?? {}),
          at,
          at,
          input.run_dir ? input.run_dir(id) : null,
          input.queue?.name ?? null,
          seq,
        );
      return this.get(id)!;
    });
  }

  get(id: string): Entity | undefined {
    return hydrate(this.db.prepare("SELECT * FROM entities WHERE id = ?").get(id));
  }

  /** Ids starting with `prefix`, at most `limit`. */
  idsWithPrefix(prefix: string, limit = 11): string[] {
    return (
      this.db
        .prepare("SELECT id FROM entities WHERE id >= ? AND id < ? ORDER BY id LIMIT ?")
        .all(prefix, prefix + "\u{10ffff}", limit) as { id: string }[]
    ).map((r) => r.id);
  }

  children(id: string): Entity[] {
    return (this.db.prepare("SELECT * FROM entities WHERE parent_id = ? ORDER BY id").all(id) as any[]).map(
      (r) => hydrate(r)!,
    );
  }

  /** The entity and everything under it, parents before children. */
  tree(id: string): Entity[] {
    const root = this.get(id);
    if (!root) return [];
    const out = [root];
    for (let i = 0; i < out.length; i++) out.push(...this.children(out[i].id));
    return out;
  }

  events(entityId: string): AuditEvent[] {
    return this.db.prepare("SELECT * FROM events WHERE entity_id = ? ORDER BY id").all(entityId) as AuditEvent[];
  }

  /** Non-status bookkeeping (phase, spec additions, the provider's session id). Status never moves here; a terminal record is left alone. */
  annotate(id: string, patch: { current_phase?: string; spec?: Record<string, unknown>; provider_session_id?: string }): boolean {
    return this.tx(() => {
      const e = this.get(id);
      if (!e || isTerminal(e.status)) return false;
      const spec = patch.spec ? JSON.stringify({ ...e.spec, ...patch.spec }) : JSON.stringify(e.spec);
      this.db
        .prepare("UPDATE entities SET current_phase = coalesce(?, current_phase), provider_session_id = coalesce(?, provider_session_id), spec = ?, updated_at = ? WHERE id = ?")
        .run(patch.current_phase ?? null, patch.provider_session_id ?? null, spec, now(), id);
      return true;
    });
  }

  /**
   * The one status writer: compare-and-set on status and version, the terminal floor,
   * and an audit row (plus terminal-notify rows) in the same transaction.
   */
  transition(req: TransitionRequest): TransitionResult {
    let enqueued = 0;
    const result = this.tx((): TransitionResult => {
      const current = this.get(req.id);
      if (!current) return { ok: false, refused: "not_found" };
      if (isTerminal(current.status)) return { ok: false, refused: "terminal", entity: current };
      const expected = req.expect?.status;
      const statusOk =
        expected === undefined || (typeof expected === "string" ? [expected] : expected).includes(current.status);
      const versionOk = req.expect?.version === undefined || req.expect.version === current.version;
      if (!statusOk || !versionOk) return { ok: false, refused: "stale", entity: current };
      if (!isLegalTransition(current.status, req.to)) return { ok: false, refused: "illegal", entity: current };

      const at = now();
      const terminal = isTerminal(req.to);
      const patch = req.patch ?? {};
      const cols = Object.keys(patch) as (keyof TransitionPatch)[];
      const changed = this.db
        .prepare(
          `UPDATE entities SET status = ?, outcome = ?, reason_code = ?, version = version + 1, updated_at = ?,
             ended_at = ?${cols.map((c) => `, ${c} = ?`).join("")}
           WHERE id = ? AND status = ? AND version = ?`,
        )
        .run(
          req.to,
          outcomeOf(req.to),
          req.reason,
          at,
          terminal ? at : null,
          ...cols.map((c) => patch[c] ?? null),
          req.id,
          current.status,
          current.version,
        ).changes;
      if (changed !== 1) return { ok: false, refused: "stale", entity: current };
      const eventId = Number(
        this.db
          .prepare(
            "INSERT INTO events (entity_id, from_status, to_status, reason_code, source, at, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .run(req.id, current.status, req.to, req.reason, req.source, at, req.detail ? JSON.stringify(req.detail) : null)
          .lastInsertRowid,
      );
      const entity = this.get(req.id)!;
      if (terminal && this.terminalHook) enqueued = this.terminalHook.enqueue(this, entity, current.status, eventId);
      return { ok: true, entity, from: current.status, eventId };
    });
    // Inside a caller's transaction the rows are not committed yet (and may roll back): no drainer.
    if (enqueued > 0 && !this.db.inTransaction) this.terminalHook?.afterCommit(enqueued);
    return result;
  }
}
