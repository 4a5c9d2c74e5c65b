/**
 * Lists (issue 13, item 1): newest first across kinds, keyset cursors that never skip or repeat
 * a record while runs are being added, the shared filters, and which list is for what.
 */
import { dbOf } from "../src/lifecycle/db/handle.js";
import { spawn } from "node:child_process";
import { readProcStat } from "../src/lifecycle/procfs.js";
import { type Home, readDb, terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData, sleep } from "./helpers/li.js";

const home = useHomes({ stopRuns: true });

const key = (j: { created_at: string; id: string }) => `${j.created_at} ${j.id}`;

/** Every page of `args` with page size `limit`, calling `between` after each page but the last. */
async function allPages(h: Home, args: string[], limit: number, between: (page: number) => Promise<void> | void = () => {}) {
  const pages: any[][] = [];
  let cursor: string | null = null;
  do {
    const d: any = await liData([...args, "--limit", String(limit), ...(cursor ? ["--cursor", cursor] : [])], { env: h.env });
    const rows = d.jobs ?? d.records;
    pages.push(rows);
    expect(d.count).toBe(rows.length);
    cursor = d.next_cursor;
    if (cursor) await between(pages.length);
  } while (cursor);
  return pages;
}

describe("newest first, across kinds", () => {
  test("after 21 flows, a run detached last is the first row of li job list and li state list", async () => {
    const h = home();
    // One-step flows (a session and its invocation each), started together, then waited for.
    const flows = await Promise.all(Array.from({ length: 21 }, (_, i) => liData(["o", "flow", "--detach", "--model", "mock/echo", `flow ${i}\n- the only step`], { env: h.env })));
    const w = await liData(["wait", ...flows.map((f) => f.id), "--max-wait-seconds", "50", "--poll-interval-seconds", "0.2"], { env: h.env });
    expect(w.all_terminal).toBe(true);
    const run = await liData(["agent", "--detach", "mock/echo", "last"], { env: h.env });
    // By id text every session (ses_) sorts before any invocation (inv_): the old order lost this run.
    const byId = readDb(h, (db) => db.prepare("SELECT id FROM entities ORDER BY id DESC LIMIT 20").pluck().all());
    expect(byId).not.toContain(run.id);
    const jobs = (await liData(["job", "list"], { env: h.env })).jobs;
    expect(jobs).toHaveLength(20);
    expect(jobs[0].id).toBe(run.id);
    const records = (await liData(["state", "list"], { env: h.env })).records;
    expect(records[0].id).toBe(run.id);
    expect(records.slice(1).map((r: any) => r.kind)).toEqual(Array(21).fill("session"));
    // Creation time descending, the id breaking ties, over everything.
    const all = (await liData(["job", "list", "--limit", "1000"], { env: h.env })).jobs;
    expect(all).toHaveLength(43);
    expect(all.map(key)).toEqual(all.map(key).sort().reverse());
    await terminal(h.env, run.id);
  }, 90000);
});

describe("cursors", () => {
  test("paging visits every record exactly once while new runs are inserted between pages", async () => {
    const h = home();
    // Inserted in a tight loop: many share a millisecond, so the id tiebreak is exercised too.
    const seeded = await withStore(h, async (s) => {
      const ids: string[] = [];
      for (let i = 0; i < 57; i++) ids.push((await s.insert({ kind: (["invocation", "session", "play"] as const)[i % 3], label: i % 2 ? "odd" : "even" })).id);
      return ids;
    });
    const ties = await withStore(h, async (s) => (await dbOf(s).get("SELECT count(*) - count(DISTINCT created_at) AS n FROM entities")) as { n: number });
    expect(ties.n).toBeGreaterThan(0);
    const added: string[] = [];
    const pages = await allPages(h, ["job", "list"], 7, async (n) => {
      await withStore(h, async (s) => added.push((await s.insert({ kind: "invocation", label: "new" })).id, (await s.insert({ kind: "session" })).id));
      if (n === 3) added.push((await liData(["agent", "--detach", "mock/echo", "mid-paging"], { env: h.env })).id);
    });
    const seen = pages.flat().map((j) => j.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...seeded].sort());
    // Records created after paging began sort before the first cursor, so no later page shows one.
    expect(seen.filter((id) => added.includes(id))).toEqual([]);
    const flat = pages.flat();
    expect(flat.map(key)).toEqual(flat.map(key).sort().reverse());
    expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 1]);
  });

  test("a filtered list pages with the same filters; the human footer prints the command for the next page", async () => {
    const h = home();
    await withStore(h, async (s) => {
      for (let i = 0; i < 30; i++) await s.insert({ kind: i % 3 === 0 ? "session" : "invocation", label: "batch one" });
    });
    const pages = await allPages(h, ["state", "list", "--kind", "invocation", "--label", "batch one"], 6);
    expect(pages.flat()).toHaveLength(20);
    expect(new Set(pages.flat().map((r) => r.kind))).toEqual(new Set(["invocation"]));

    const first = await li(["job", "list", "--kind", "invocation", "--label", "batch one", "--limit", "8"], { env: h.env });
    const footer = first.stdout.trim().split("\n").at(-1)!;
    const m = /^8 of 20 shown; next: (li job list .*)$/.exec(footer);
    expect(m).not.toBeNull();
    expect(m![1]).toContain("--label 'batch one'");
    // The printed command, run as a shell would split it, shows rows 9–16.
    const argv = m![1].match(/'[^']*'|\S+/g)!.slice(1).map((w) => w.replace(/^'|'$/g, ""));
    const next = await li(argv, { env: h.env });
    expect(next.stdout.trim().split("\n").at(-1)).toMatch(/^8 of 20 shown \(9–16\); next: li job list /);
    const machine = await liData(argv, { env: h.env });
    expect(machine.count).toBe(8);
  });

  test("a cursor li did not print is invalid input naming the option; pages have a maximum size", async () => {
    const h = home();
    for (const bad of ["nonsense", "zz.inv_x!", "abc"]) {
      const r = await li(["--machine", "job", "list", "--cursor", bad], { env: h.env });
      expect([r.code, r.json.error.kind, r.json.error.detail.field]).toEqual([2, "invalid_input", "cursor"]);
    }
    const big = await li(["--machine", "state", "list", "--limit", "1001"], { env: h.env });
    expect([big.code, big.json.error.kind]).toEqual([2, "invalid_input"]);
    const d = await liData(["dispatch", "list"], { env: h.env });
    expect(d).toEqual({ deliveries: [], count: 0, total: 0, next_cursor: null });
    const r = await li(["--machine", "dispatch", "list", "--cursor", "nonsense"], { env: h.env });
    expect(r.json.error.detail.field).toBe("cursor");
  });
});

describe("filters", () => {
  test("--label, --status, --kind and --since select; a --since li cannot read is refused", async () => {
    const h = home();
    const [old, a, b] = await withStore(h, async (s) => {
      const old = await s.insert({ kind: "invocation", label: "x" });
      await dbOf(s).run("UPDATE entities SET created_at = ? WHERE id = ?", ["2020-01-01T00:00:00.000Z", old.id]);
      const a = await s.insert({ kind: "invocation", label: "x" });
      await s.transition({ id: a.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
      const b = await s.insert({ kind: "session", label: "y" });
      await s.transition({ id: b.id, to: "cancelled", reason: "session.cancelled.user", source: "admin" });
      return [old.id, a.id, b.id];
    });
    const ids = async (...args: string[]) => (await liData(["job", "list", ...args], { env: h.env })).jobs.map((j: any) => j.id);
    expect(await ids("--label", "x")).toEqual([a, old]);
    expect(await ids("--label", "x", "y")).toEqual([b, a, old]);
    expect(await ids("--status", "completed", "cancelled")).toEqual([b, a]);
    expect(await ids("--kind", "session")).toEqual([b]);
    expect(await ids("--since", "1d")).toEqual([b, a]);
    expect(await ids("--since", "3600")).toEqual([b, a]);
    expect(await ids("--since", "2019-06-01T00:00:00Z", "--label", "x")).toEqual([a, old]);
    const total = await liData(["job", "list", "--label", "x", "--limit", "1"], { env: h.env });
    expect([total.count, total.total]).toEqual([1, 2]);
    const bad = await li(["--machine", "job", "list", "--since", "last tuesday"], { env: h.env });
    expect([bad.code, bad.json.error.kind, bad.json.error.detail.field]).toEqual([2, "invalid_input", "since"]);
    expect(bad.json.error.message).toMatch(/7d/);
  });
});

describe("two lists, two purposes", () => {
  test("li job list observes (a dead run is reaped to lost); li state list shows the record as stored", async () => {
    const h = home();
    const p = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    const stat = readProcStat(p.pid!)!;
    const dead = await withStore(h, async (s) => {
      const e = await s.insert({ kind: "invocation" });
      await s.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime", patch: { pid: p.pid!, pgid: stat.pgrp, proc_start: stat.starttime, started_at: new Date().toISOString() } });
      return e.id;
    });
    p.kill("SIGKILL");
    await new Promise((r) => p.once("exit", r));
    await sleep(50);
    const stored = (await liData(["state", "list"], { env: h.env })).records[0];
    expect(stored).toMatchObject({ id: dead, status: "running", version: 2 });
    expect(stored).not.toHaveProperty("placement");
    // Reading the store did not write it.
    expect((await liData(["state", "list"], { env: h.env })).records[0].status).toBe("running");
    const observed = (await liData(["job", "list"], { env: h.env })).jobs[0];
    expect(observed).toMatchObject({ id: dead, status: "lost" });
  });

  test("state list is top-level unless --all; job list shows every job", async () => {
    const h = home();
    const [parent, child] = await withStore(h, async (s) => {
      const parent = await s.insert({ kind: "session" });
      return [parent.id, (await s.insert({ kind: "invocation", parent_id: parent.id })).id];
    });
    expect((await liData(["state", "list"], { env: h.env })).records.map((r: any) => r.id)).toEqual([parent]);
    // (Both may share a millisecond, and then the id orders them: compare as sets.)
    expect((await liData(["state", "list", "--all"], { env: h.env })).records.map((r: any) => r.id).sort()).toEqual([child, parent].sort());
    expect((await liData(["job", "list"], { env: h.env })).jobs.map((r: any) => r.id).sort()).toEqual([child, parent].sort());
    const empty = await li(["job", "list"], { env: home().env });
    expect(empty.stdout).toMatch(/^no jobs yet: start one with li agent/);
  });
});

describe("by host (issue 22, section 4)", () => {
  test("li job list --host lists one host's runs (and those placed on it by name, not yet claimed); li stats --group-by host counts by host", async () => {
    const h = home();
    const on = (host: string) => ({ ...h.env, LI_HOST: host });
    const a = await liData(["agent", "mock/echo", "on alpha"], { env: on("alpha") });
    const b = await liData(["agent", "mock/echo", "on beta"], { env: on("beta") });
    // Placed for a host no daemon serves here: queued, no host yet, its place gamma.
    const g = await liData(["agent", "--host", "gamma", "--allow-new-host", "mock/echo", "for gamma"], { env: on("alpha") });
    const ids = async (...args: string[]) => (await liData(["job", "list", ...args], { env: on("alpha") })).jobs.map((j: any) => j.id);
    expect(await ids("--host", "alpha")).toEqual([a.id]);
    expect(await ids("--host", "beta")).toEqual([b.id]);
    expect(await ids("--host", "gamma")).toEqual([g.id]);
    expect(await ids("--host", "alpha", "beta")).toEqual([b.id, a.id]);
    expect(await ids("--host", "nowhere")).toEqual([]);
    expect(await ids("--host", "alpha", "--status", "queued")).toEqual([]);
    // The next page's command keeps the filter.
    const human = await li(["job", "list", "--host", "alpha", "beta", "--limit", "1"], { env: on("alpha") });
    expect(human.stdout).toMatch(/next: li job list --host alpha beta --limit 1 --cursor \S+/);

    const s = await liData(["stats", "--group-by", "host"], { env: on("alpha") });
    expect(s.group_by).toEqual(["host"]);
    expect([...s.groups].sort((x: any, y: any) => x.host.localeCompare(y.host))).toEqual([
      { host: "alpha", count: 1 },
      { host: "beta", count: 1 },
      { host: "gamma", count: 1 },
    ]);
    const byOutcome = await liData(["stats", "--group-by", "host,outcome"], { env: on("alpha") });
    expect(byOutcome.groups).toContainEqual({ host: "gamma", outcome: "none", count: 1 });
    expect(byOutcome.groups).toContainEqual({ host: "alpha", outcome: "succeeded", count: 1 });
    expect((await li(["stats", "--group-by", "host"], { env: on("alpha") })).stdout).toMatch(/by host:\nHOST +COUNT\n/);
    await li(["kill", g.id], { env: on("alpha") });
  });
});
