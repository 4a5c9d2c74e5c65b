/**
 * Kill (issue 3): `li kill` stops a SIGTERM-ignoring run after the grace period, reaps a play
 * transitively (play → session → invocations) with an audit row for each, and leaves an
 * already-terminal record unchanged.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { LiError } from "../src/errors.js";
import { readProcStat } from "../src/lifecycle/procfs.js";
import type { Entity, Store } from "../src/lifecycle/store.js";
import { untilAgentReady, detach, dump, jobStatus, READY_BYTES, submit, untilStatus, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData, liveMembers, spentAtLeast, until } from "./helpers/li.js";

const procs: ChildProcess[] = [];
const home = useHomes({ procs });

test("mock/hang (ignores SIGTERM) is gone after the grace period: SIGTERM then SIGKILL, cancelled (invocation.cancelled.killed), audit source admin", async () => {
  const h = home();
  const file = path.join(h.home, "hang-prompt.txt");
  fs.writeFileSync(file, Buffer.alloc(READY_BYTES, "h"));
  const id = (await detach(h.env, ["mock/hang", "--prompt-file", file])).id;
  const running = await untilStatus(h.env, id, (j) => j.status === "running");
  // A node process signalled before its script runs dies of the default action, mock or not.
  const agent = await untilAgentReady(running);

  const t0 = Date.now();
  const r = await li(["--machine", "kill", "--grace", "1", id.slice(0, 20)], { env: h.env });
  const took = Date.now() - t0;
  expect(r.code).toBe(0);
  const report = r.json.data;
  expect(report).toMatchObject({ id, kind: "invocation", grace_seconds: 1, partial: false });
  expect(report.entities).toEqual([
    {
      id,
      kind: "invocation",
      previous_status: "running",
      status: "cancelled",
      action: "cancelled",
      reason_code: "invocation.cancelled.killed",
      pgid: running.pgid,
      signals: ["SIGTERM", "SIGKILL"],
      process_gone: true,
    },
  ]);
  // SIGTERM did not do it: the grace period was spent before SIGKILL.
  spentAtLeast(took / 1000, 1, "the grace period");
  expect(liveMembers(running.pgid)).toEqual([]);
  expect(readProcStat(agent)).toBeNull();

  const j = await jobStatus(h.env, id);
  expect(j).toMatchObject({ status: "cancelled", outcome: "cancelled", reason_code: "invocation.cancelled.killed", possibly_orphaned: false });
  const ev = (await liData(["state", "events", id], { env: h.env })).events;
  expect(ev.map((e: any) => [e.from_status, e.to_status, e.reason_code, e.source])).toEqual([
    ["preparing", "running", "invocation.running.spawned", "runtime"],
    ["running", "cancelled", "invocation.cancelled.killed", "admin"],
  ]);
});

test("a mock/sleep run that honours SIGTERM needs no SIGKILL, and its worker's own end is refused by the terminal floor", async () => {
  const h = home();
  const id = await submit(h.env, "mock/sleep:30", "x");
  const running = await untilStatus(h.env, id, (j) => j.status === "running");
  await until(() => liveMembers(running.pgid).some((p) => p !== running.pid));
  const report = await liData(["kill", "--grace", "5", id], { env: h.env });
  expect(report.entities[0]).toMatchObject({ action: "cancelled", signals: ["SIGTERM"], process_gone: true });
  await until(() => liveMembers(running.pgid).length === 0);
  const ev = (await liData(["state", "events", id], { env: h.env })).events;
  expect(ev.map((e: any) => e.to_status)).toEqual(["running", "cancelled"]);
});

describe("transitive reaping", () => {
  function sleeper(): ChildProcess {
    const p = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    procs.push(p);
    return p;
  }
  async function startAs(s: Store, e: Entity, p: ChildProcess): Promise<Entity> {
    const stat = readProcStat(p.pid!)!;
    const r = await s.transition({ id: e.id, to: "running", reason: `${e.kind}.running.spawned`, source: "runtime", expect: { status: "preparing" }, patch: { pid: p.pid!, pgid: stat.pgrp, proc_start: stat.starttime } });
    if (!r.ok) throw new Error("setup");
    return r.entity;
  }

  test("a play with a session and 3 invocations is reaped transitively, with an audit row for each", async () => {
    const h = home();
    const sessionProc = sleeper();
    const invProcs = [sleeper(), sleeper(), sleeper()];
    const exits = [sessionProc, ...invProcs].map((p) => new Promise<string | null>((r) => p.on("exit", (_c, sig) => r(sig))));
    const tree = await withStore(h, async (s) => {
      const play = await s.insert({ kind: "play", label: "pb" });
      await s.transition({ id: play.id, to: "running", reason: "play.running.started", source: "runtime" });
      const session = await startAs(s, (await s.insert({ kind: "session", parent_id: play.id })), sessionProc);
      const invs: Entity[] = [];
      for (const p of invProcs) invs.push(await startAs(s, await s.insert({ kind: "invocation", parent_id: session.id }), p));
      // One child already ended: it is reported and left alone.
      const done = await s.insert({ kind: "invocation", parent_id: session.id });
      await s.transition({ id: done.id, to: "completed", reason: "invocation.completed.exit_zero", source: "runtime" });
      return { play, session, invs, done: (await s.get(done.id))! };
    });
    const doneBefore = await withStore(h, async (s) => JSON.stringify([await s.get(tree.done.id), await s.events(tree.done.id)]));

    const r = await li(["--machine", "kill", "--grace", "1", tree.play.id], { env: h.env });
    expect(r.code).toBe(0);
    const report = r.json.data;
    expect(report.partial).toBe(false);
    const byId = new Map<string, any>(report.entities.map((e: any) => [e.id, e]));
    expect(report.entities.map((e: any) => e.id).sort()).toEqual([tree.play.id, tree.session.id, ...tree.invs.map((i) => i.id), tree.done.id].sort());
    // Parents before children: nothing can be added under a record already terminal.
    expect(report.entities[0].id).toBe(tree.play.id);
    expect(report.entities[1].id).toBe(tree.session.id);
    expect(byId.get(tree.play.id)).toMatchObject({ kind: "play", previous_status: "running", status: "cancelled", action: "cancelled", reason_code: "play.cancelled.killed", signals: [], process_gone: null });
    expect(byId.get(tree.session.id)).toMatchObject({ kind: "session", status: "cancelled", action: "cancelled", reason_code: "session.cancelled.killed", signals: ["SIGTERM"], process_gone: true });
    for (const inv of tree.invs) expect(byId.get(inv.id)).toMatchObject({ kind: "invocation", status: "cancelled", action: "cancelled", reason_code: "invocation.cancelled.killed", signals: ["SIGTERM"], process_gone: true });
    expect(byId.get(tree.done.id)).toMatchObject({ status: "completed", action: "already_terminal", signals: [], process_gone: null });

    expect(await Promise.all(exits)).toEqual(["SIGTERM", "SIGTERM", "SIGTERM", "SIGTERM"]);
    await withStore(h, async (s) => {
      for (const e of [tree.play, tree.session, ...tree.invs]) {
        const ev = await s.events(e.id);
        expect(ev.at(-1)).toMatchObject({ entity_id: e.id, from_status: "running", to_status: "cancelled", reason_code: `${e.kind}.cancelled.killed`, source: "admin" });
        expect(ev.filter((x) => x.source === "admin")).toHaveLength(1);
        expect(await s.get(e.id)).toMatchObject({ status: "cancelled", outcome: "cancelled" });
      }
      expect(JSON.stringify([await s.get(tree.done.id), await s.events(tree.done.id)])).toBe(doneBefore);
      // The tree cannot grow again under a cancelled parent.
      await expect(s.insert({ kind: "invocation", parent_id: tree.session.id })).rejects.toThrow(LiError);
    });

    // Killing it again changes nothing and reports every entity already terminal.
    const before = (await dump(h));
    const again = await liData(["kill", "--grace", "0", tree.play.id], { env: h.env });
    expect(again.entities.map((e: any) => e.action)).toEqual(again.entities.map(() => "already_terminal"));
    expect((await dump(h))).toBe(before);
  });

  test("killing a session reaps its invocations but not its parent play", async () => {
    const h = home();
    const p = sleeper();
    const tree = await withStore(h, async (s) => {
      const play = await s.insert({ kind: "play" });
      await s.transition({ id: play.id, to: "running", reason: "play.running.started", source: "runtime" });
      const session = await s.insert({ kind: "session", parent_id: play.id });
      await s.transition({ id: session.id, to: "running", reason: "session.running.started", source: "runtime" });
      const inv = await startAs(s, (await s.insert({ kind: "invocation", parent_id: session.id })), p);
      return { play, session, inv };
    });
    const report = await liData(["kill", "--grace", "1", tree.session.id], { env: h.env });
    expect(report.entities.map((e: any) => [e.id, e.action])).toEqual([
      [tree.session.id, "cancelled"],
      [tree.inv.id, "cancelled"],
    ]);
    await withStore(h, async (s) => {
      expect((await s.get(tree.play.id))!.status).toBe("running");
      expect(await s.events(tree.play.id)).toHaveLength(1);
    });
  });
});

test("an already-terminal record is reported already_terminal and left unchanged", async () => {
  const h = home();
  const id = await submit(h.env, "mock/echo", "done");
  await untilStatus(h.env, id, (j) => j.terminal);
  const before = (await dump(h));
  const r = await li(["--machine", "kill", "--grace", "0", id], { env: h.env });
  expect(r.code).toBe(0);
  expect(r.json.data).toMatchObject({ id, partial: false });
  expect(r.json.data.entities).toEqual([
    { id, kind: "invocation", previous_status: "completed", status: "completed", action: "already_terminal", reason_code: "invocation.completed.exit_zero", pgid: expect.any(Number), signals: [], process_gone: null },
  ]);
  expect((await dump(h))).toBe(before);
  const human = await li(["kill", id], { env: h.env });
  expect(human.code).toBe(0);
  expect(human.stdout).toContain("already_terminal");
  expect((await dump(h))).toBe(before);
});
