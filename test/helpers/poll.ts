/**
 * Waiting on one run without a `li` process per look (issue 40). Each `li` costs 0.15–0.2 s of
 * CPU, and polling `li job status` every 100 ms was a large part of the suite. Instead the test
 * reads the run's row itself (read-only: nothing migrates, nothing is reaped) and asks li only
 * when its answer could be the one awaited:
 *
 * - the row changed and already satisfies the condition (the row has the fields the conditions
 *   read: status, pid, host, provider_session_id; `terminal` is added);
 * - the row changed, or its worker's liveness did, and the run is started but its worker no longer
 *   runs: only a li reader reaps it (the answer li gives may be the end the reader publishes);
 * - a second has passed since li was last asked: whatever else a li reader does on its own (promote
 *   a queue, end a placed run on a lease's expiry) still happens, only less often.
 *
 * What is returned, and what the condition is finally held against, is always `li job status`'s
 * answer, so a test proves what it proved when every look was li's.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { commitWaker, type CommitWaker } from "../../src/lifecycle/commit-waker.js";
import { SQL } from "../../src/lifecycle/db/handle.js";
import { SqliteDb } from "../../src/lifecycle/db/sqlite.js";
import { ProcSnapshot } from "../../src/lifecycle/observe.js";
import { isSameProcess } from "../../src/lifecycle/procfs.js";
import { isTerminal } from "../../src/lifecycle/vocab.js";
import { liData, sleep, WAIT_MS } from "./li.js";

/** The longest li is left unasked while a wait goes on. */
const ASK_AT_LEAST_EVERY_MS = 1000;
const LOOK_EVERY_MS = 100;

/** Reads one entity row of a home's store, or undefined (no store yet, no such id, a store it cannot read). */
interface RowReader {
  get(id: string): Promise<any | undefined>;
  /** Sleeps `ms`, or less when the store's file is written (SQLite; li wait does the same). */
  pause(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** A reader for the store `env` names: LI_STORE, else $LI_HOME/state.db. */
function rowReader(env: NodeJS.ProcessEnv): RowReader {
  const sql = "SELECT * FROM entities WHERE id = ?";
  if (env.LI_STORE) {
    const url = env.LI_STORE;
    let db: Promise<any> | undefined;
    return {
      async get(id) {
        try {
          db ??= import("../../src/lifecycle/db/postgres.js").then(({ PostgresDb }) => PostgresDb.connect(url));
          return await (await db).get(sql, [id]);
        } catch {
          // No schema yet, or the server is away (a test's outage): li is asked instead. A broken
          // connection is dropped so the next look connects again.
          const dead = db;
          db = undefined;
          await dead?.then((d) => d.close()).catch(() => null);
          return undefined;
        }
      },
      pause: async (ms) => {
        await sleep(ms);
      },
      close: async () => {
        await db?.then((d) => d.close()).catch(() => null);
      },
    };
  }
  const file = env.LI_HOME ? path.join(env.LI_HOME, "state.db") : undefined;
  let db: Database.Database | undefined;
  // li wait's own sleep: a write of the store ends it early (commit-waker.ts), once there is one.
  let waker: CommitWaker | undefined;
  return {
    pause: async (ms) => {
      await (waker ? waker.sleep(ms) : sleep(ms));
    },
    async get(id) {
      try {
        if (!db && file && fs.existsSync(file)) {
          db = new Database(file, { readonly: true });
          waker = commitWaker({ [SQL]: new SqliteDb(db) });
        }
        return db?.prepare(sql).get(id);
      } catch {
        return undefined;
      }
    },
    close: async () => {
      await waker?.close();
      db?.close();
    },
  };
}

/** How the run's worker stands, as a li reader would judge it (observe.ts); null before it started or once ended. */
function liveness(row: any): "alive" | "group_remains" | "gone" | null {
  if (isTerminal(row.status) || row.pid === null || row.proc_start === null) return null;
  if (isSameProcess(Number(row.pid), Number(row.proc_start))) return "alive";
  return row.pgid !== null && new ProcSnapshot().members(Number(row.pgid), Number(row.proc_start)).length > 0 ? "group_remains" : "gone";
}

/** Whether li's answer may now hold: the key of what was looked at, and whether to ask li. */
function look(row: any, pred: (j: any) => boolean): { key: string; promising: boolean } {
  const live = liveness(row);
  let holds: boolean;
  try {
    holds = !!pred({ ...row, terminal: isTerminal(row.status) });
  } catch {
    holds = true;
  }
  return { key: JSON.stringify([row.status, row.version, row.pid, row.updated_at, live]), promising: holds || (live !== null && live !== "alive") };
}

/** Polls until `pred` holds of `li job status <id>` (see above); returns that answer. */
export async function untilJob(env: NodeJS.ProcessEnv, id: string, pred: (j: any) => boolean, timeoutMs = WAIT_MS): Promise<any> {
  const end = Date.now() + timeoutMs;
  const reader = rowReader(env);
  let target = id;
  let askedKey: string | undefined;
  let askedAt = 0;
  let last: any;
  try {
    for (;;) {
      const row = await reader.get(target);
      const seen = row ? look(row, pred) : undefined;
      if (!seen || Date.now() - askedAt >= ASK_AT_LEAST_EVERY_MS || (seen.key !== askedKey && seen.promising)) {
        last = (await liData(["job", "status", target], { env })).jobs[0];
        askedKey = seen?.key;
        askedAt = Date.now();
        // A prefix or @last: from here on, the row of the run li resolved it to.
        target = last.id;
        if (pred(last)) return last;
      }
      if (Date.now() > end) throw new Error(`condition not met in time (li job status ${id}: ${last ? `${last.status}, placement ${last.placement}` : "not asked"})`);
      await reader.pause(LOOK_EVERY_MS);
    }
  } finally {
    await reader.close();
  }
}
