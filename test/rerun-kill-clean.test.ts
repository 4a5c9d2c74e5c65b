import { dbOf } from "../src/lifecycle/db/handle.js";
import fs from "node:fs";
import path from "node:path";
import { dump, entityRows, events, READY_BYTES, readDb, terminal, untilAgentReady, useHomes, withStore, type Home } from "./helpers/fixtures.js";
import { li, liData, until } from "./helpers/li.js";

/* Issue 13, item 6 (and li kill --dry-run of item 9): rerun, kill several, clean up. */

const home = useHomes({ stopRuns: true });

async function run(h: Home, args: string[]): Promise<string> {
  const r = await liData(["agent", "--detach", ...args], { env: h.env });
  await terminal(h.env, r.id);
  return r.id;
}

/** A mock/hang run whose agent has read its prompt (so it is past ignoring SIGTERM). */
async function hang(h: Home, label?: string): Promise<string> {
  const r = await liData(["agent", "--detach", ...(label ? ["--label", label] : []), "--prompt-file", "-", "mock/hang"], { env: h.env, input: "x".repeat(READY_BYTES) });
  const j = await until(async () => {
    const s = (await liData(["job", "status", r.id], { env: h.env })).jobs[0];
    return s.status === "running" && s.pid && s;
  });
  await untilAgentReady(j);
  return r.id;
}

const counts = (h: Home) => readDb(h, (db) => db.prepare("SELECT kind, status, outcome, n FROM entity_counts WHERE n > 0 ORDER BY 1, 2, 3").all());
const recount = (h: Home) => readDb(h, (db) => db.prepare("SELECT kind, status, coalesce(outcome, 'none') AS outcome, count(*) AS n FROM entities GROUP BY 1, 2, 3 ORDER BY 1, 2, 3").all());

describe("li clean", () => {
  test("--dry-run reports exactly what clean then removes; non-terminal and undelivered runs are kept", async () => {
    const h = home();
    fs.mkdirSync(h.home, { recursive: true });
    // A handler that cannot deliver keeps its run's notification pending for a while.
    fs.writeFileSync(path.join(h.home, "settings.yaml"), 'notify:\n  on_terminal:\n    - {name: slow, exec: ["/bin/sleep", "30"], scope: selected, timeout_seconds: 60}\n');
    const ok = await run(h, ["mock/echo", "done"]);
    const failed = await run(h, ["mock/fail:3", "broken"]);
    const flow = await liData(["o", "flow", "--detach", "--model", "mock/echo", "--", "- one\n- two (after s1)"], { env: h.env });
    await terminal(h.env, flow.id, 30000);
    const notified = await run(h, ["--notify", "slow", "mock/echo", "tell me"]);
    const running = await hang(h);
    const steps = (await entityRows(h)).filter((r) => r.parent_id === flow.id).map((r) => r.id);
    expect(steps).toHaveLength(2);

    const before = (await dump(h));
    const dry = await liData(["clean", "--dry-run"], { env: h.env });
    expect((await dump(h))).toBe(before);
    expect(dry.dry_run).toBe(true);
    expect(dry.removed.map((r: any) => r.id).sort()).toEqual([ok, failed, flow.id].sort());
    expect(dry.removed.find((r: any) => r.id === flow.id)).toMatchObject({ kind: "session", records: 3 });
    expect(dry.records).toBe(5);
    expect(dry.kept.undelivered).toBe(1);
    for (const id of [ok, failed, flow.id, ...steps]) expect(fs.existsSync(path.join(h.home, "runs", id))).toBe(true);

    const wet = await liData(["clean"], { env: h.env });
    expect({ ...wet, dry_run: true }).toEqual(dry);
    const left = (await entityRows(h)).map((r) => r.id).sort();
    expect(left).toEqual([notified, running].sort());
    for (const id of [ok, failed, flow.id, ...steps]) {
      expect(fs.existsSync(path.join(h.home, "runs", id))).toBe(false);
      expect((await events(h, id))).toEqual([]);
    }
    expect(fs.existsSync(path.join(h.home, "runs", running))).toBe(true);
    expect(wet.bytes_freed).toBeGreaterThan(0);
    // The maintained counters followed the deletes.
    expect(counts(h)).toEqual(recount(h));
    expect((await liData(["job", "status", running], { env: h.env })).jobs[0].status).toBe("running");
    // Nothing more to do.
    expect((await liData(["clean"], { env: h.env })).count).toBe(0);
  }, 90000);

  test("--older-than, --status and --keep-last narrow what goes", async () => {
    const h = home();
    const a = await run(h, ["mock/echo", "a"]);
    const b = await run(h, ["mock/fail:2", "b"]);
    const c = await run(h, ["mock/echo", "c"]);
    expect((await liData(["clean", "--older-than", "1h"], { env: h.env })).count).toBe(0);
    const bad = await li(["--machine", "clean", "--older-than", "a week"], { env: h.env });
    expect(bad.json.error.kind).toBe("invalid_input");
    expect(bad.json.error.message).toMatch(/90s, 10m, 12h, 7d or 2w/);
    expect((await liData(["clean", "--status", "failed"], { env: h.env })).removed.map((r: any) => r.id)).toEqual([b]);
    const kept = await liData(["clean", "--keep-last", "1"], { env: h.env });
    expect(kept.removed.map((r: any) => r.id)).toEqual([a]);
    expect(kept.kept.keep_last).toBe(1);
    expect((await entityRows(h)).map((r) => r.id)).toEqual([c]);
  }, 60000);

  test("reading before anything ran creates nothing, and clean says there is nothing to remove", async () => {
    const h = home();
    fs.rmSync(h.home, { recursive: true, force: true });
    expect((await liData(["clean", "--dry-run"], { env: h.env })).count).toBe(0);
    const human = await li(["job", "list"], { env: h.env });
    expect(human.stderr).toMatch(/nothing yet: no state in/);
    expect(fs.existsSync(h.home)).toBe(false);
  });
});

describe("li rerun", () => {
  test("an agent run: a new run of the same stored request, linked to the old one", async () => {
    const h = home();
    const old = await run(h, ["--label", "again", "--timeout", "60", "mock/echo", "say it twice"]);
    const r = await liData(["rerun", "--detach", old], { env: h.env });
    expect(r).toMatchObject({ kind: "invocation", rerun_of: old });
    expect(r.id).not.toBe(old);
    const end = await terminal(h.env, r.id);
    expect(end).toMatchObject({ status: "completed", label: "again", model: "mock/echo" });
    expect((await liData(["job", "output", r.id], { env: h.env })).output).toBe("say it twice");
    const shown = await liData(["state", "show", "--request", r.id], { env: h.env });
    expect(shown.record.spec).toMatchObject({ rerun_of: old, timeout_seconds: 60 });
    expect(shown.request).toMatchObject({ prompt: "say it twice", prompt_bytes: 12 });
  }, 30000);

  test("a flow reruns whole; a step is refused, naming the run to rerun; a gone prompt is not_found", async () => {
    const h = home();
    const flow = await liData(["o", "flow", "--detach", "--model", "mock/echo", "--", "- one\n- two (after s1)"], { env: h.env });
    await terminal(h.env, flow.id, 30000);
    const again = await liData(["rerun", "--detach", flow.id], { env: h.env });
    expect((await terminal(h.env, again.id, 30000)).status).toBe("completed");
    expect((await entityRows(h)).filter((r) => r.parent_id === again.id)).toHaveLength(2);

    const step = (await entityRows(h)).find((r) => r.parent_id === flow.id)!.id;
    const refused = await li(["--machine", "rerun", step], { env: h.env });
    expect(refused.json.error).toMatchObject({ kind: "invalid_input", detail: { id: step, parent_id: flow.id } });
    expect(refused.json.error.message).toContain(`li rerun ${flow.id}`);

    fs.rmSync(path.join(h.home, "runs", flow.id), { recursive: true });
    const gone = await li(["--machine", "rerun", flow.id], { env: h.env });
    expect(gone.json.error.kind).toBe("not_found");
    expect(gone.json.error.message).toMatch(/stored prompt .* is gone/);
  }, 60000);
});

describe("li kill: several ids, --label, --dry-run", () => {
  test("--dry-run shows what would be cancelled and signalled and changes nothing; then --label kills both", async () => {
    const h = home();
    const a = await hang(h, "batch");
    const b = await hang(h, "batch");
    const other = await hang(h, "other");
    const before = (await dump(h));
    const dry = await liData(["kill", "--dry-run", "--label", "batch"], { env: h.env });
    expect((await dump(h))).toBe(before);
    expect(dry.targets).toEqual([a, b]);
    expect(dry.entities).toEqual([
      expect.objectContaining({ id: a, status: "running", transition: "cancel", reason_code: "invocation.cancelled.killed", signals: ["SIGTERM", "SIGKILL"] }),
      expect.objectContaining({ id: b, status: "running", transition: "cancel", signals: ["SIGTERM", "SIGKILL"] }),
    ]);
    const k = await liData(["kill", "--grace", "0", "--label", "batch"], { env: h.env });
    expect(k.targets).toEqual([a, b]);
    expect(k.kills).toHaveLength(2);
    expect(k.entities.map((e: any) => [e.id, e.status, e.process_gone])).toEqual([
      [a, "cancelled", true],
      [b, "cancelled", true],
    ]);
    expect(k.id).toBeUndefined();
    expect((await liData(["job", "status", other], { env: h.env })).jobs[0].status).toBe("running");
  }, 60000);

  test("several ids are resolved before anything is killed: one bad id kills nothing", async () => {
    const h = home();
    const a = await hang(h);
    const b = await hang(h);
    const before = (await dump(h));
    const r = await li(["--machine", "kill", "--grace", "0", a, b, "inv_zzzzzz"], { env: h.env });
    expect(r.json.error.kind).toBe("not_found");
    expect((await dump(h))).toBe(before);
    const k = await liData(["kill", "--grace", "0", a, b], { env: h.env });
    expect(k.entities.map((e: any) => e.status)).toEqual(["cancelled", "cancelled"]);
    const none = await li(["--machine", "kill"], { env: h.env });
    expect(none.json.error).toMatchObject({ kind: "invalid_input", message: expect.stringMatching(/one or more ids, or --label/) });
  }, 60000);
});

test("the counters the triggers keep equal a full recount after inserts, transitions and deletes", async () => {
  const h = home();
  await withStore(h, async (s) => {
    const a = await s.insert({ kind: "invocation" });
    const b = await s.insert({ kind: "session", queue: { name: null } });
    await s.transition({ id: a.id, to: "running", reason: "invocation.running.spawned", source: "runtime" });
    await s.transition({ id: a.id, to: "failed", reason: "invocation.failed.exit_nonzero", source: "runtime" });
    await s.transition({ id: b.id, to: "cancelled", reason: "session.cancelled.killed", source: "admin" });
    await dbOf(s).run("DELETE FROM events");
    await dbOf(s).run("DELETE FROM entities WHERE id = ?", [b.id]);
  });
  expect(counts(h)).toEqual(recount(h));
  expect(counts(h)).toEqual([{ kind: "invocation", status: "failed", outcome: "failed", n: 1 }]);
});
