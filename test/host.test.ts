/**
 * Host identity (issue 19, item 2): LI_HOST names this host (default: the machine's short
 * hostname); every record carries the host it was made on in every machine view and in the
 * studio; an unusable LI_HOST is refused before anything is written; a store from before
 * hosts (schema 7) is refused until `li state migrate`, after which its rows show host null.
 * Runs on both stores (jest.config.js ON_BOTH_STORES).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { dbOf } from "../src/lifecycle/db/handle.js";
import { PG_BASE_SCHEMA, PG_BASE_VERSION } from "../src/lifecycle/db/pg-schema.js";
import { hostLoad } from "../src/lifecycle/hosts.js";
import { newId } from "../src/lifecycle/ids.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../src/lifecycle/schema.js";
import { dump, type Home, rows, terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { apiGet, startStudio } from "./helpers/studio.js";

const home = useHomes({ stopRuns: true });

/** `h`'s environment naming the host `host` (or, undefined, none: the hostname applies). */
const on = (h: Home, host: string | undefined): NodeJS.ProcessEnv => {
  const env = { ...h.env };
  delete env.LI_HOST;
  if (host !== undefined) env.LI_HOST = host;
  return env;
};

describe("every view of a record names its host", () => {
  test("LI_HOST=build-1: job list, job status, job output, state show, state list, wait, monitor and the studio say so; a flow's steps too", async () => {
    const h = home();
    const env = on(h, "build-1");
    const run = await liData(["agent", "--detach", "mock/echo", "hi"], { env });
    const flow = await liData(["o", "flow", "--detach", "--model", "mock/echo", "goal\n- a\n- b"], { env });
    await terminal(env, run.id);
    await terminal(env, flow.id);
    // Read from another host's point of view: the host is the record's, not the reader's.
    const reader = on(h, "reader-2");

    expect((await liData(["job", "status", run.id], { env: reader })).jobs[0].host).toBe("build-1");
    const list = (await liData(["job", "list"], { env: reader })).jobs;
    expect(list.map((j: any) => j.host)).toEqual(list.map(() => "build-1"));
    // Its console is build-1's: read there (another host is told where it is: hosts-shared.test).
    expect((await liData(["job", "output", run.id], { env })).host).toBe("build-1");
    const shown = await liData(["state", "show", flow.id], { env: reader });
    expect(shown.record.host).toBe("build-1");
    expect(shown.children.length).toBeGreaterThan(0);
    expect(shown.children.map((c: any) => c.host)).toEqual(shown.children.map(() => "build-1"));
    const records = (await liData(["state", "list", "--all"], { env: reader })).records;
    expect(records.length).toBeGreaterThan(2);
    expect(records.every((r: any) => r.host === "build-1")).toBe(true);
    const w = await liData(["wait", run.id, flow.id, "--max-wait-seconds", "0"], { env: reader });
    expect(w.entries.map((e: any) => [e.id, e.host])).toEqual([[run.id, "build-1"], [flow.id, "build-1"]]);

    // The human list has a HOST column.
    const human = await li(["job", "list"], { env: reader });
    expect(human.stdout).toMatch(/^ID\s.*\sHOST$/m);
    expect(human.stdout).toMatch(/\sbuild-1$/m);

    // An active run in li monitor.
    const slow = await liData(["agent", "--detach", "mock/sleep:30", "zzz"], { env });
    const m = await liData(["monitor"], { env: reader });
    expect(m.active.find((a: any) => a.id === slow.id)).toMatchObject({ host: "build-1" });
    await li(["kill", "--grace", "0", slow.id], { env });

    const s = await startStudio(reader);
    try {
      const runs = (await apiGet(s, "/api/runs")).runs;
      expect(runs.find((r: any) => r.id === run.id).host).toBe("build-1");
      const detail = await apiGet(s, `/api/runs/${flow.id}`);
      expect(detail.run.host).toBe("build-1");
      expect(detail.children.every((c: any) => c.host === "build-1")).toBe(true);
      const g = await apiGet(s, `/api/runs/${flow.id}/graph`);
      expect(g.nodes.map((n: any) => n.host)).toEqual(g.nodes.map(() => "build-1"));
    } finally {
      await s.stop();
    }
  });

  test("without LI_HOST the host is the machine's short hostname", async () => {
    const h = home();
    const env = on(h, undefined);
    const run = await liData(["agent", "--detach", "mock/echo", "hi"], { env });
    await terminal(env, run.id);
    const expected = os.hostname().split(".")[0];
    expect((await liData(["job", "status", run.id], { env })).jobs[0].host).toBe(expected);
    expect((await liData(["wait", run.id, "--max-wait-seconds", "0"], { env })).entries[0].host).toBe(expected);
    expect((await liData(["state", "show", run.id], { env })).record.host).toBe(expected);
  });

  test.each([["any"], ["a b"], ["-leading-dash"], ["x".repeat(64)], ["é"]])("LI_HOST=%j is invalid_input before anything is written", async (bad) => {
    const h = home({ emptyStore: true });
    const env = on(h, bad);
    for (const args of [["agent", "--detach", "mock/echo", "hi"], ["o", "flow", "--detach", "--model", "mock/echo", "goal\n- a"]]) {
      const r = await li(["--machine", ...args], { env });
      expect([r.code, r.json?.ok, r.json?.error?.kind, r.json?.error?.detail?.field]).toEqual([2, false, "invalid_input", "LI_HOST"]);
      expect(r.json.error.message).toContain("LI_HOST");
    }
    // Nothing was made: no state.db (or, on PostgreSQL, no schema and no rows).
    expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(false);
    expect(await dump(h)).toBe(JSON.stringify({ entities: [], events: [], deliveries: [] }));
  });
});

describe("the store", () => {
  /** Runs `fn` with LI_HOST set in this process (what Store.insert reads), then restores it. */
  async function asHost<T>(host: string, fn: () => Promise<T>): Promise<T> {
    const was = process.env.LI_HOST;
    process.env.LI_HOST = host;
    try {
      return await fn();
    } finally {
      if (was === undefined) delete process.env.LI_HOST;
      else process.env.LI_HOST = was;
    }
  }

  test("a child is recorded on its parent's host, whatever its inserter's LI_HOST; hostLoad counts each host's unfinished records", async () => {
    const h = home();
    await withStore(h, async (s) => {
      const flow = await asHost("h1", () => s.insert({ kind: "session" }));
      const step = await asHost("h2", () => s.insert({ kind: "invocation", parent_id: flow.id }));
      expect([flow.host, step.host]).toEqual(["h1", "h1"]);
      const other = await asHost("h2", () => s.insert({ kind: "invocation" }));
      const done = await asHost("h2", () => s.insert({ kind: "invocation" }));
      await s.transition({ id: done.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
      expect(other.host).toBe("h2");
      expect(await hostLoad(s)).toEqual([
        { host: "h1", status: "preparing", n: 2 },
        { host: "h2", status: "preparing", n: 1 },
      ]);
      expect(await hostLoad(s, "h2")).toEqual([{ host: "h2", status: "preparing", n: 1 }]);
      expect(await hostLoad(s, "nowhere")).toEqual([]);
      // The count reads the partial index of unfinished runs, not the history.
      const db = dbOf(s);
      if (db.dialect === "sqlite") {
        const plan = await db.all<{ detail: string }>("EXPLAIN QUERY PLAN SELECT host, status, count(*) AS n FROM entities WHERE host = ? AND status IN ('preparing', 'queued', 'running') GROUP BY host, status", ["h1"]);
        expect(plan.map((p) => p.detail).join("\n")).toMatch(/entities_host_active/);
      } else {
        const ix = await db.all<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = 'entities_host_active'");
        expect(ix[0]?.indexdef).toMatch(/\(host, status\) WHERE/);
      }
    });
  });

  test("a store at schema 7 is refused until li state migrate; then its old rows show host null and new ones the host", async () => {
    const h = home({ emptyStore: true });
    const old = newId("invocation");
    const at = new Date().toISOString();
    const insertOld = "INSERT INTO entities (id, kind, status, outcome, reason_code, spec, created_at, updated_at, ended_at) VALUES (?, 'invocation', 'completed', 'succeeded', 'invocation.completed.exit_zero', '{}', ?, ?, ?)";
    if (h.env.LI_STORE) {
      // A PostgreSQL store is created at its base version, 7: what an li before hosts left.
      expect(PG_BASE_VERSION).toBe(7);
      const { PostgresDb } = await import("../src/lifecycle/db/postgres.js");
      const db = await PostgresDb.connect(h.env.LI_STORE);
      try {
        await db.exec(PG_BASE_SCHEMA);
        await db.setSchemaVersion(7);
        await db.run(insertOld, [old, at, at, at]);
      } finally {
        await db.close();
      }
    } else {
      const d = new Database(path.join(h.home, "state.db"));
      for (const step of MIGRATIONS.slice(0, 7)) d.exec(step);
      d.pragma("user_version = 7");
      d.prepare(insertOld).run(old, at, at, at);
      d.close();
    }
    expect(SCHEMA_VERSION).toBeGreaterThan(7);
    const env = on(h, "build-1");

    for (const args of [["job", "list"], ["agent", "--detach", "mock/echo", "hi"]]) {
      const r = await li(["--machine", ...args], { env });
      expect([r.code, r.json?.error?.kind]).toEqual([1, "unavailable"]);
      expect(r.json.error.detail).toMatchObject({ schema_version: 7, required: SCHEMA_VERSION, remedy: "li state migrate" });
    }
    expect((await rows(h, "SELECT id FROM entities")).map((r: any) => r.id)).toEqual([old]);

    expect(await liData(["state", "migrate"], { env })).toEqual({ from_version: 7, to_version: SCHEMA_VERSION, applied: MIGRATIONS.slice(7).map((_, i) => 8 + i) });
    const run = await liData(["agent", "--detach", "mock/echo", "hi"], { env });
    await terminal(env, run.id);
    const jobs = (await liData(["job", "list"], { env })).jobs;
    expect(jobs.map((j: any) => [j.id, j.host])).toEqual([[run.id, "build-1"], [old, null]]);
    expect((await liData(["state", "show", old], { env })).record.host).toBeNull();
    expect((await liData(["wait", old, run.id, "--max-wait-seconds", "0"], { env })).entries.map((e: any) => e.host)).toEqual([null, "build-1"]);
  });
});
