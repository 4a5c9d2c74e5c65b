import { AsyncLocalStorage } from "node:async_hooks";
import { LiError } from "../errors.js";
import { SQL, type HasSql } from "./db/handle.js";
import { END_CHANNEL } from "./commit-waker.js";
import type { SqlDb, TxMode } from "./db/types.js";
import { newId, type IdKind } from "./ids.js";
import { hostName } from "./locate.js";
import { cancelPendingApprovals } from "./approvals/records.js";
import type { AuditEvent, BudgetAlert, Entity, TransitionPatch, TransitionRequest, TransitionResult } from "./records.js";
import { migrationStep, SCHEMA_VERSION } from "./schema.js";
import { isLegalTransition, isTerminal, outcomeOf, type EntityKind } from "./vocab.js";

export type { AuditEvent, BudgetAlert, Entity, TransitionPatch, TransitionRequest, TransitionResult } from "./records.js";

/** Runs inside the transition's transaction for every terminal move; resolves to the rows it enqueued. */
export interface TerminalHook {
  enqueue(store: Store, entity: Entity, from: string, eventId: number): Promise<number>;
  /** The same outbox for a budget crossing a threshold, inside the spend write's transaction (budgets/thresholds.ts). */
  enqueueBudget?(store: Store, alert: BudgetAlert): Promise<number>;
  afterCommit(count: number): void;
}

const now = () => new Date().toISOString();

/** An entity row as stored (spec is JSON text) as the Entity callers see. */
export function hydrate(row: any): Entity | undefined {
  if (!row) return undefined;
  return { ...row, spec: JSON.parse(row.spec) };
}

/**
 * The lifecycle store over one SQL connection (db/types.ts), whatever its backend. Every method
 * that reaches the database is async.
 */
export class Store implements HasSql {
  terminalHook: TerminalHook | null = null;
  /** Per outermost transaction (and its async flow): the delivery rows its transitions enqueued. */
  private readonly enqueuedIn = new AsyncLocalStorage<{ deliveries: number }>();
  /** True for the empty stand-in a read gets where no state.db exists yet (open.ts openStoreForRead). */
  placeholder = false;
  readonly [SQL]: SqlDb;

  constructor(db: SqlDb) {
    this[SQL] = db;
  }

  /** Whether writes can be attempted: open, and neither read-only nor the placeholder. */
  get writable(): boolean {
    const db = this[SQL];
    return !this.placeholder && db.isOpen && !db.readOnly;
  }

  /** Refuses a schema this li does not speak; `migrating` accepts an older one. `where` names the store (a file, or a URL without its password). */
  async checkVersion(where: string, opts: { migrating?: boolean } = {}): Promise<void> {
    const version = await this.schemaVersion();
    const pg = this[SQL].dialect === "postgres";
    const name = pg ? `the PostgreSQL store at ${where}` : "state.db";
    const at = pg ? { store: where } : { path: where };
    if (version > SCHEMA_VERSION) {
      throw new LiError("unavailable", `${name} is at schema version ${version}, newer than this li understands (${SCHEMA_VERSION}); upgrade li`, {
        ...at,
        schema_version: version,
        supported: SCHEMA_VERSION,
      });
    } else if (version < SCHEMA_VERSION && !opts.migrating) {
      throw new LiError("unavailable", `${name} is at schema version ${version}; this li needs ${SCHEMA_VERSION}. Run \`li state migrate\` to upgrade it`, {
        ...at,
        schema_version: version,
        required: SCHEMA_VERSION,
        remedy: "li state migrate",
      });
    }
  }

  close(): Promise<void> {
    return this[SQL].close();
  }

  schemaVersion(): Promise<number> {
    return this[SQL].schemaVersion();
  }

  /** Applies every pending migration, each in its own transaction. Returns the versions applied. */
  async migrate(target = SCHEMA_VERSION): Promise<number[]> {
    const db = this[SQL];
    const applied: number[] = [];
    for (;;) {
      // The version is read under the write lock: a concurrent opener may have migrated
      // the same fresh file between our read and our lock, and a step must not run twice.
      const next = await db.tx(async (): Promise<number | null> => {
        const v = await db.schemaVersion();
        if (v >= target) return null;
        await db.exec(migrationStep(db.dialect, v));
        await db.setSchemaVersion(v + 1);
        return v + 1;
      });
      if (next === null) return applied;
      applied.push(next);
    }
  }

  /**
   * One transaction (immediate: the write lock is taken up front so the busy timeout applies).
   * Store calls made inside `fn` belong to it. Terminal-notify rows its transitions enqueued get a
   * drainer once the outermost transaction has committed, never before (and none if it rolls back).
   */
  async tx<T>(fn: () => Promise<T>, mode: TxMode = "immediate"): Promise<T> {
    const db = this[SQL];
    if (db.inTransaction) return db.tx(() => fn(), mode);
    const scope = { deliveries: 0 };
    const result = await this.enqueuedIn.run(scope, () => db.tx(() => fn(), mode));
    if (scope.deliveries > 0) this.terminalHook?.afterCommit(scope.deliveries);
    return result;
  }

  /** Outbox rows the caller's transaction enqueued: a drainer starts once its outermost store transaction commits. */
  enqueued(count: number): void {
    const scope = this.enqueuedIn.getStore();
    if (scope) scope.deliveries += count;
  }

  /**
   * Records a new entity. Two checks here rely on the write lock of the transaction (SQLite has
   * one writer): the parent is not terminal, and a queued run's place is max(queue_seq) + 1.
   * Another backend needs its own guard for each (issue 19).
   */
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
    /**
     * Placed with --host: recorded `queued`, in line, with no host until a daemon claims it, and
     * its prompt kept in the store for whichever host that is.
     */
    placed?: { place: string; prompt?: string };
    /**
     * A top-level run's prompt, kept in the store too when the store is shared (PostgreSQL), so
     * that li rerun works from any host; on state.db the run directory's copy is the one.
     */
    keep_prompt?: string;
    /**
     * Budget admission of a top-level run that starts now, run under this insert's write lock
     * before the row is written (runtime/submit/budget-gate.ts): it reserves, or holds the run (recorded
     * `queued`, in line, for a promoter to start once its budget has room), or throws a refusal,
     * which writes nothing.
     */
    admit?: (id: string) => Promise<"start" | "hold">;
  }): Promise<Entity> {
    const db = this[SQL];
    const id = input.id ?? newId(input.kind as IdKind);
    const at = now();
    // Read (and checked) before the transaction: an unusable LI_HOST writes nothing.
    const here = hostName();
    return this.tx(async () => {
      let host = here;
      if (input.parent_id) {
        const parent = await this.get(input.parent_id);
        if (!parent) throw new LiError("not_found", `parent ${input.parent_id} does not exist`);
        // A finished parent takes no new children: kill relies on this to stop a tree growing.
        if (isTerminal(parent.status))
          throw new LiError("conflict", `parent ${parent.id} is already ${parent.status}`, { parent: parent.id });
        // A flow's steps run where the flow runs, whatever environment its worker was given.
        host = parent.host ?? here;
      }
      const held = !input.parent_id && !input.queue && !input.placed && input.admit ? (await input.admit(id)) === "hold" : false;
      const queue = input.queue ?? (input.placed || held ? { name: null } : undefined);
      // Under the write lock, so two submitters never draw the same place in the line.
      const seq = queue ? ((await db.get<{ m: number | null }>("SELECT max(queue_seq) AS m FROM entities WHERE queue_seq IS NOT NULL"))!.m ?? 0) + 1 : null;
      await db.run(
        `INSERT INTO entities (id, kind, parent_id, label, status, spec, created_at, updated_at, run_dir, queue, queue_seq, host, place)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          id,
          input.kind,
          input.parent_id ?? null,
          input.label ?? null,
          queue ? "queued" : (input.status ?? "preparing"),
          JSON.stringify(input.spec ?? {}),
          at,
          at,
          input.run_dir && !input.placed ? input.run_dir(id) : null,
          queue?.name ?? null,
          seq,
          input.placed ? null : host,
          input.placed?.place ?? null,
        ],
      );
      const kept = input.placed?.prompt ?? (db.dialect === "postgres" && !input.parent_id ? input.keep_prompt : undefined);
      if (kept !== undefined) await db.run("INSERT INTO run_inputs (entity_id, prompt) VALUES (?, ?)", [id, kept]);
      return (await this.get(id))!;
    });
  }

  async get(id: string): Promise<Entity | undefined> {
    return hydrate(await this[SQL].get("SELECT * FROM entities WHERE id = ?", [id]));
  }

  /** Ids starting with `prefix`, at most `limit`. */
  async idsWithPrefix(prefix: string, limit = 11): Promise<string[]> {
    const rows = await this[SQL].all<{ id: string }>("SELECT id FROM entities WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", [prefix, prefix + "\u{10ffff}", limit]);
    return rows.map((r) => r.id);
  }

  async children(id: string): Promise<Entity[]> {
    return (await this[SQL].all("SELECT * FROM entities WHERE parent_id = ? ORDER BY id", [id])).map((r) => hydrate(r)!);
  }

  /** The entity and everything under it, parents before children. */
  async tree(id: string): Promise<Entity[]> {
    const root = await this.get(id);
    if (!root) return [];
    const out = [root];
    for (let i = 0; i < out.length; i++) out.push(...(await this.children(out[i].id)));
    return out;
  }

  events(entityId: string): Promise<AuditEvent[]> {
    return this[SQL].all<AuditEvent>("SELECT * FROM events WHERE entity_id = ? ORDER BY id", [entityId]);
  }

  /** Non-status bookkeeping (phase, spec additions, the provider's session id). Status never moves here; a terminal record is left alone. */
  annotate(id: string, patch: { current_phase?: string; spec?: Record<string, unknown>; provider_session_id?: string }): Promise<boolean> {
    return this.tx(async () => {
      const e = await this.get(id);
      if (!e || isTerminal(e.status)) return false;
      const spec = patch.spec ? JSON.stringify({ ...e.spec, ...patch.spec }) : JSON.stringify(e.spec);
      await this[SQL].run(
        "UPDATE entities SET current_phase = coalesce(?, current_phase), provider_session_id = coalesce(?, provider_session_id), spec = ?, updated_at = ? WHERE id = ?",
        [patch.current_phase ?? null, patch.provider_session_id ?? null, spec, now(), id],
      );
      return true;
    });
  }

  /**
   * The one status writer: compare-and-set on status and version, the terminal floor,
   * and an audit row (plus terminal-notify rows) in the same transaction.
   */
  async transition(req: TransitionRequest): Promise<TransitionResult> {
    const db = this[SQL];
    return this.tx(async (): Promise<TransitionResult> => {
      const current = await this.get(req.id);
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
      const { changes } = await db.run(
        `UPDATE entities SET status = ?, outcome = ?, reason_code = ?, version = version + 1, updated_at = ?,
           ended_at = ?${cols.map((c) => `, ${c} = ?`).join("")}
         WHERE id = ? AND status = ? AND version = ?`,
        [req.to, outcomeOf(req.to), req.reason, at, terminal ? at : null, ...cols.map((c) => patch[c] ?? null), req.id, current.status, current.version],
      );
      if (changes !== 1) return { ok: false, refused: "stale", entity: current };
      const { lastInsertRowid: eventId } = await db.run(
        "INSERT INTO events (entity_id, from_status, to_status, reason_code, source, at, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [req.id, current.status, req.to, req.reason, req.source, at, req.detail ? JSON.stringify(req.detail) : null],
      );
      const entity = (await this.get(req.id))!;
      // Its waiters on other connections wake at the commit (commit-waker.ts); SQLite's see the file written.
      if (terminal && db.dialect === "postgres") await db.get("SELECT pg_notify(?, ?)", [END_CHANNEL, req.id]);
      // A request its run can no longer receive an answer for ends with the run, so a late answer is refused.
      if (terminal && entity.kind === "invocation")
        await cancelPendingApprovals(this, req.id, req.source === "reaper" ? "reap" : req.source === "admin" ? "kill" : req.source, `the run ended ${req.to} (${req.reason}) while this request waited`);
      if (terminal && this.terminalHook) {
        // Counted for the drainer its outermost store transaction starts once committed (one opened
        // on the raw connection starts none, as before).
        this.enqueued(await this.terminalHook.enqueue(this, entity, current.status, eventId));
      }
      return { ok: true, entity, from: current.status, eventId };
    });
  }
}
