/**
 * Fixtures shared by the suites: per-file LI_HOMEs with their teardown, a Store opened on a
 * home, direct reads of state.db, the `li job` polls, the mock agent's readiness probe.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { ProcSnapshot } from "../../src/lifecycle/observe.js";
import { readProcStat } from "../../src/lifecycle/procfs.js";
import { isTerminal } from "../../src/lifecycle/vocab.js";
import { openStore as openLifecycleStore } from "../../src/lifecycle/open.js";
import type { Store } from "../../src/lifecycle/store.js";
import { dbOf } from "../../src/lifecycle/db/handle.js";
import { type Home, liData, liveMembers, sleep, tempHome, until, WAIT_MS } from "./li.js";
import { untilJob } from "./poll.js";
import type { FakeApi } from "../fixtures/fake-apis/server.js";

export type { Home };

/**
 * A factory of fresh LI_HOMEs for one test file (tempHome), every one removed after the file's
 * last test. Call it once, at the top level. Before the homes go: any of `procs` still running is
 * SIGKILLed, and with `stopRuns` the process groups of runs still going (killLeftovers).
 */
export function useHomes(opts: { procs?: ChildProcess[]; stopRuns?: boolean } = {}): (home?: { emptyStore?: boolean }) => Home {
  const homes: Home[] = [];
  afterAll(async () => {
    for (const p of opts.procs ?? []) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    if (opts.stopRuns) await killLeftovers(homes);
    for (const h of homes) h.cleanup();
  });
  return (home = {}) => {
    const h = tempHome(home);
    homes.push(h);
    return h;
  };
}

/**
 * A factory of scratch folders for one test file or describe block (a person's home, a
 * repository, a work folder beside a test home): each a fresh folder in the temp directory named
 * `prefix` (or the call's own) and a random tail, by its real path (what li records and the
 * sandbox shows), every one removed after the block's last test. Call it once, after useHomes.
 */
export function useScratches(prefix: string): (own?: string) => string {
  const made: string[] = [];
  afterAll(() => made.forEach((s) => fs.rmSync(s, { recursive: true, force: true })));
  return (own = prefix) => {
    const s = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), own)));
    made.push(s);
    return s;
  };
}

/** A loopback fake of a provider's API (test/fixtures/fake-apis/) for one block: started before its first test, closed after its last. */
export function useFake(start: () => Promise<FakeApi>): () => FakeApi {
  let fake: FakeApi | undefined;
  beforeAll(async () => {
    fake = await start();
  });
  afterAll(() => fake?.close());
  return () => fake!;
}

/**
 * SIGKILLs the process group of every run in `homes`' stores whose group still runs, read straight
 * from each store (no li per run), and waits (at most 15 s) until those groups are gone: a worker
 * that outlives its record's end still writes its last files (the home's removal then met
 * ENOTEMPTY). With `awaitStarts`, also until every unended run has a group (a run submitted just
 * before has none on record until its worker starts); not by default, since a queued or placed
 * run may never have one. Only a group li recorded is touched (the leader's start time must match,
 * as li kill checks), never this process's own.
 */
export async function killLeftovers(homes: Home[], opts: { awaitStarts?: boolean } = {}): Promise<void> {
  const waitMs = 15_000;
  const own = readProcStat(process.pid)?.pgrp;
  const end = Date.now() + waitMs;
  for (;;) {
    const procs = new ProcSnapshot();
    let waiting = false;
    for (const h of homes) {
      const runs = await rows<{ status: string; pgid: number | null; proc_start: number | null }>(h, "SELECT status, pgid, proc_start FROM entities").catch(() => []);
      for (const r of runs) {
        if (r.pgid === null || r.proc_start === null) {
          waiting ||= !!opts.awaitStarts && !isTerminal(r.status);
          continue;
        }
        const pgid = Number(r.pgid);
        if (pgid === own || procs.members(pgid, Number(r.proc_start)).length === 0) continue;
        waiting = true;
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {}
      }
    }
    if (!waiting || Date.now() > end) return;
    await sleep(100);
  }
}

/**
 * True once the mock agent has read its prompt: mock/hang installs its SIGTERM handler before
 * that read (right after is not enough: a loaded machine may pause it between the two). (SigCgt cannot tell: node itself catches SIGTERM from startup
 * and re-raises it with the default action.) Give the prompt READY_BYTES so the read shows in rchar.
 */
export const READY_BYTES = 1536 * 1024;
function agentReady(pid: number): boolean {
  try {
    const m = /rchar:\s*(\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, "utf8"));
    return m !== null && Number(m[1]) >= READY_BYTES;
  } catch {
    return false;
  }
}

/**
 * Waits until the running worker `run` has started its mock agent and the agent is ready
 * (see agentReady; the prompt must be READY_BYTES long); returns the agent's pid.
 */
export async function untilAgentReady(run: { pid: number; pgid: number }): Promise<number> {
  const agent = (await until(() => liveMembers(run.pgid).find((p) => p !== run.pid)))!;
  await until(() => agentReady(agent));
  return agent;
}

/** A Store on `h`'s store (state.db, or its LI_STORE), with its terminal hook; sets process.env.LI_HOME, LI_STORE and LI_STORE_LISTEN, which opening reads. The caller closes it. */
export function openStore(h: Home): Promise<Store> {
  process.env.LI_HOME = h.home;
  for (const name of ["LI_STORE", "LI_STORE_LISTEN"]) {
    if (h.env[name]) process.env[name] = h.env[name];
    else delete process.env[name];
  }
  return openLifecycleStore();
}

/** Runs `fn` on a Store opened in `h` (the test process writing as li's own lifecycle layer would). */
export async function withStore<T>(h: Home, fn: (s: Store) => T | Promise<T>): Promise<T> {
  const s = await openStore(h);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Runs `fn` on `h`'s state.db opened read-only: no Store, so no migration and no reaping. SQLite only; see rows(). */
export function readDb<T>(h: Home, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(h.home, "state.db"), { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * Rows of one query (SQLite's dialect) straight from `h`'s store, whichever backend: no Store, so
 * no migration and no reaping. [] before the store exists.
 */
export async function rows<T = any>(h: Home, sql: string, params: unknown[] = []): Promise<T[]> {
  if (!h.env.LI_STORE) {
    if (!fs.existsSync(path.join(h.home, "state.db"))) return [];
    return readDb(h, (db) => db.prepare(sql).all(...params) as T[]);
  }
  const { PostgresDb } = await import("../../src/lifecycle/db/postgres.js");
  const db = await PostgresDb.connect(h.env.LI_STORE);
  try {
    if ((await db.schemaVersion()) === 0) return [];
    return await db.all<T>(sql, params);
  } finally {
    await db.close();
  }
}

/** Every row of entities, events and deliveries, as one string: equal before and after means nothing was written. */
export async function dump(h: Home): Promise<string> {
  return JSON.stringify({
    entities: await rows(h, "SELECT * FROM entities ORDER BY id"),
    events: await rows(h, "SELECT * FROM events ORDER BY id"),
    deliveries: await rows(h, "SELECT * FROM deliveries ORDER BY id"),
  });
}

/** The entities table as stored (spec still JSON text), by id; [] before the store exists. Fast enough to poll. */
export function entityRows<T = any>(h: Home): Promise<T[]> {
  return rows<T>(h, "SELECT * FROM entities ORDER BY id");
}

export interface EventRow {
  id: number;
  entity_id: string;
  from_status: string | null;
  to_status: string;
  reason_code: string;
  source: string;
  at: string;
  detail: string | null;
}

/** One entity's audit rows, oldest first, read straight from the store. */
export function events(h: Home, id: string): Promise<EventRow[]> {
  return rows<EventRow>(h, "SELECT * FROM events WHERE entity_id = ? ORDER BY id", [id]);
}

/** `li job status <id>`: the one job. */
export async function jobStatus(env: NodeJS.ProcessEnv, id: string): Promise<any> {
  return (await liData(["job", "status", id], { env })).jobs[0];
}

/**
 * Waits until `pred` holds of `li job status <id>`; returns that job. The looks in between read the
 * store in this process, and li is asked when its answer may hold or only a li reader can move the
 * run on (its worker gone): see test/helpers/poll.ts. New tests wait on a run with this, terminal()
 * or `li wait`, never with their own loop of `li job status`.
 */
export function untilStatus(env: NodeJS.ProcessEnv, id: string, pred: (j: any) => boolean, timeoutMs = WAIT_MS): Promise<any> {
  return untilJob(env, id, pred, timeoutMs);
}

/** Waits until the job is terminal (untilStatus); returns li's answer. */
export async function terminal(env: NodeJS.ProcessEnv, id: string, timeoutMs = WAIT_MS): Promise<any> {
  return untilStatus(env, id, (j) => j.terminal, timeoutMs);
}

/** `li agent --detach <args…>`: the submitted record. */
export async function detach(env: NodeJS.ProcessEnv, args: string[]): Promise<any> {
  return liData(["agent", "--detach", ...args], { env });
}

/** A detached run of `model` on `prompt`: its id. */
export async function submit(env: NodeJS.ProcessEnv, model: string, prompt = "p"): Promise<string> {
  return (await detach(env, [model, prompt])).id;
}

/** `li job output <id>`, all of it (under --machine the default page is the last 16 KiB). */
export async function output(env: NodeJS.ProcessEnv, id: string): Promise<any> {
  return liData(["job", "output", id, "--offset", "0", "--max-bytes", String(16 * 1024 * 1024)], { env });
}

/**
 * A trigger that makes the store refuse writes, in whichever backend `s` has: `abort` fails the
 * statement with `message`, `ignore` skips the row silently (as a concurrent writer winning a
 * compare-and-set would leave it). `when` is a condition on OLD/NEW.
 */
export async function refuseWrites(s: Store, t: { name: string; table: string; event: "INSERT" | "UPDATE"; action: "abort" | "ignore"; when?: string; message?: string }): Promise<void> {
  const db = dbOf(s);
  if (db.dialect === "sqlite") {
    const raise = t.action === "abort" ? `RAISE(ABORT, '${t.message ?? "refused"}')` : "RAISE(IGNORE)";
    await db.exec(`CREATE TRIGGER ${t.name} BEFORE ${t.event} ON ${t.table} ${t.when ? `WHEN ${t.when}` : ""} BEGIN SELECT ${raise}; END;`);
    return;
  }
  const body = t.action === "abort" ? `RAISE EXCEPTION '${t.message ?? "refused"}';` : "RETURN NULL;";
  await db.exec(`CREATE FUNCTION ${t.name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} END $$;
    CREATE TRIGGER ${t.name} BEFORE ${t.event} ON ${t.table} FOR EACH ROW ${t.when ? `WHEN (${t.when})` : ""} EXECUTE FUNCTION ${t.name}_fn();`);
}

export async function allowWrites(s: Store, name: string, table: string): Promise<void> {
  const db = dbOf(s);
  await db.exec(db.dialect === "sqlite" ? `DROP TRIGGER ${name}` : `DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}_fn();`);
}
