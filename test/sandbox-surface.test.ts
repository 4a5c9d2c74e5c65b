import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { li, liData, tempHome, until, type Home } from "./helpers/li.js";
import { events, rows, terminal, untilStatus } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { connectMcp } from "./helpers/mcp.js";
import { describePostgres } from "./helpers/postgres.js";

/*
 * Contained runs (issue 38), the input side: where a run's sandbox is asked for (--sandbox on
 * every spawn command, a profile, the settings default, li mcp --sandbox as a floor), what each
 * run records as spec.sandbox, and what is refused before any record exists. Most runs here are
 * placed on a host no daemon serves (--host elsewhere --allow-new-host): their record is what is
 * judged, and nothing runs.
 */

let h: Home;
let dir: string;
beforeEach(() => {
  h = tempHome();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-"));
});
afterEach(() => {
  h.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

const PLACED = ["--host", "elsewhere", "--allow-new-host", "--cwd", "/"];
const settings = (text: string) => fs.writeFileSync(path.join(h.home, "settings.yaml"), text);
const sandboxOf = async (id: string): Promise<unknown> => JSON.parse((await rows(h, "SELECT spec FROM entities WHERE id = ?", [id]))[0].spec).sandbox;
const count = async () => (await rows(h, "SELECT COUNT(*) AS n FROM entities"))[0].n;
const run = (args: string[], env: NodeJS.ProcessEnv = {}) => li(["--machine", ...args], { env: { ...h.env, ...env }, cwd: dir });

test("--sandbox on every spawn command is recorded as spec.sandbox: li agent, o flow, o fanout, play, a schedule's fire; a fan-out's workers and synthesis carry it", async () => {
  const agent = await liData(["agent", "--detach", ...PLACED, "--sandbox", "workspace", "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(agent.id)).toBe("workspace");
  const off = await liData(["agent", "--detach", ...PLACED, "--sandbox", "off", "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(off.id)).toBe("off");
  const none = await liData(["agent", "--detach", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(none.id)).toBe("off");
  const flow = await liData(["o", "flow", "--detach", ...PLACED, "--sandbox", "workspace", "--model", "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(flow.id)).toBe("workspace");

  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(path.join(h.home, "playbooks", "mine.playbook.yaml"), "description: one\nmodel: mock/echo\n");
  const play = await liData(["play", "mine", "--detach", ...PLACED, "--sandbox", "workspace", "x"], { env: h.env, cwd: dir });
  const playRow = (await rows(h, "SELECT spec FROM entities WHERE id = ?", [play.id]))[0];
  expect(JSON.parse(playRow.spec).session.sandbox).toBe("workspace");

  await liData(["schedule", "create", "nightly", "--every", "1h", "--sandbox", "workspace", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  const fired = await liData(["schedule", "trigger", "nightly"], { env: h.env, cwd: dir });
  expect(await sandboxOf(fired.id)).toBe("workspace");

  // A local fan-out: its session starts each worker and the synthesis, every one recorded workspace.
  const fan = await liData(["o", "fanout", "-n", "2", "--model", "mock/echo", "--synthesis-model", "mock/echo", "--sandbox", "workspace", "--detach", "hi"], { env: h.env, cwd: dir });
  await terminal(h.env, fan.id, 60000);
  const children = await rows(h, "SELECT spec FROM entities WHERE parent_id = ?", [fan.id]);
  expect(children.length).toBe(3);
  for (const c of children) expect(JSON.parse(c.spec).sandbox).toBe("workspace");

  // A rerun keeps it.
  const again = await liData(["rerun", agent.id, "--allow-new-host"], { env: h.env, cwd: dir });
  expect(await sandboxOf(again.id)).toBe("workspace");
});

test("precedence: --sandbox > profile > sandbox.default in settings > off", async () => {
  settings("sandbox: {default: workspace}\nprofiles:\n  open: {model: mock/echo, sandbox: off}\n  shut: {model: mock/echo, sandbox: workspace}\n");
  const byDefault = await liData(["agent", "--detach", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(byDefault.id)).toBe("workspace");
  const byProfile = await liData(["agent", "--detach", ...PLACED, "--profile", "open", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(byProfile.id)).toBe("off");
  const byOption = await liData(["agent", "--detach", ...PLACED, "--profile", "shut", "--sandbox", "off", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(byOption.id)).toBe("off");
  const flowDefault = await liData(["o", "fanout", "-n", "1", "--detach", ...PLACED, "--model", "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(flowDefault.id)).toBe("workspace");

  settings("profiles:\n  shut: {model: mock/echo, sandbox: workspace}\n");
  const raised = await liData(["agent", "--detach", ...PLACED, "--profile", "shut", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(raised.id)).toBe("workspace");
  const plain = await liData(["agent", "--detach", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(plain.id)).toBe("off");

  // A fan-out off by default: the worker whose own profile says workspace is raised, the other is not.
  const fan = await liData(["o", "fanout", "-n", "2", "--workers", "profile:shut,mock/echo", "--detach", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(fan.id)).toBe("off");
  await terminal(h.env, fan.id, 60000);
  const kids = (await rows(h, "SELECT spec FROM entities WHERE parent_id = ?", [fan.id])).map((r) => JSON.parse(r.spec));
  expect(kids.map((k) => [k.profile, k.sandbox]).sort()).toEqual([[null, "off"], ["shut", "workspace"]]);
});

test("a trusted project file may raise a run to workspace, never lower it: its settings' sandbox: off and its profile's sandbox: off leave the user's default workspace; its profile's workspace raises a run the user's default leaves off", async () => {
  fs.mkdirSync(path.join(dir, ".li", "profiles"), { recursive: true });
  fs.mkdirSync(path.join(dir, ".git"));
  const project = path.join(dir, ".li", "settings.yaml");
  const openProfile = path.join(dir, ".li", "profiles", "open.yaml");
  const shutProfile = path.join(dir, ".li", "profiles", "shut.yaml");
  fs.writeFileSync(project, "sandbox: off\n");
  fs.writeFileSync(openProfile, "model: mock/echo\nsandbox: off\n");
  fs.writeFileSync(shutProfile, "model: mock/echo\nsandbox: workspace\n");
  for (const f of [project, openProfile, shutProfile]) expect((await li(["hooks", "trust", f], { env: h.env, cwd: dir })).code).toBe(0);

  settings("sandbox: workspace\n");
  const plain = await liData(["agent", "--detach", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(plain.id)).toBe("workspace");
  const open = await liData(["agent", "--detach", ...PLACED, "--profile", "open", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(open.id)).toBe("workspace");

  settings("");
  const off = await liData(["agent", "--detach", ...PLACED, "mock/echo", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(off.id)).toBe("off");
  const shut = await liData(["agent", "--detach", ...PLACED, "--profile", "shut", "hi"], { env: h.env, cwd: dir });
  expect(await sandboxOf(shut.id)).toBe("workspace");
});

test("an unknown mode is invalid_input naming the field, on the command line, in a profile and in settings; nothing is written", async () => {
  const cli = await run(["agent", "--detach", "--sandbox", "everywhere", "mock/echo", "hi"]);
  expect(cli.json.error.kind).toBe("invalid_input");
  expect(cli.json.error.message).toContain("--sandbox");
  expect(cli.json.error.message).toContain("workspace, off");
  settings("profiles:\n  p: {model: mock/echo, sandbox: sometimes}\n");
  const profile = await run(["agent", "--detach", "--profile", "p", "hi"]);
  expect(profile.json.error).toMatchObject({ kind: "invalid_input", detail: { key: "profiles.p.sandbox" } });
  expect(profile.json.error.message).toContain("workspace");
  settings("sandbox: {default: sometimes}\n");
  const fromSettings = await run(["agent", "--detach", "mock/echo", "hi"]);
  expect(fromSettings.json.error).toMatchObject({ kind: "invalid_input", detail: { key: "sandbox.default" } });
  expect(fs.existsSync(path.join(h.home, "state.db")) ? await count() : 0).toBe(0);
});

test("a run asking for workspace on a host that cannot sandbox is refused (sandbox_unavailable) before any record, naming what is missing and how to install it; a placed run is left to the host that runs it", async () => {
  const cannot = { LI_TEST_SANDBOX_UNAVAILABLE: "bubblewrap" };
  for (const args of [
    ["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hi"],
    ["o", "fanout", "-n", "1", "--detach", "--sandbox", "workspace", "--model", "mock/echo", "hi"],
    ["schedule", "create", "s", "--every", "1h", "--sandbox", "workspace", "mock/echo", "hi"],
    ["schedule", "create", "t", "--every", "1h", "--", "fanout", "-n", "1", "--sandbox", "workspace", "--model", "mock/echo", "hi"],
  ]) {
    const r = await run(args, cannot);
    expect(r.code).not.toBe(0);
    expect(r.json.error.detail).toMatchObject({ reason: "sandbox_unavailable", missing: "bubblewrap", remedy: expect.stringContaining("apt-get install bubblewrap") });
    expect(r.json.error.message).toContain("bubblewrap");
  }
  settings("sandbox: workspace\n");
  const byDefault = await run(["agent", "--detach", "mock/echo", "hi"], cannot);
  expect(byDefault.json.error.detail.reason).toBe("sandbox_unavailable");
  expect(fs.existsSync(path.join(h.home, "state.db")) ? await count() : 0).toBe(0);
  expect(fs.existsSync(path.join(h.home, "runs")) ? fs.readdirSync(path.join(h.home, "runs")) : []).toEqual([]);

  // bubblewrap found through PATH: a PATH without it is a host that cannot sandbox.
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), "li-sbx-path-"));
  try {
    fs.symlinkSync(process.execPath, path.join(bare, "node"));
    const r = await run(["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hi"], { PATH: bare });
    expect(r.json.error.detail).toMatchObject({ reason: "sandbox_unavailable", missing: "bubblewrap" });
  } finally {
    fs.rmSync(bare, { recursive: true, force: true });
  }

  const placed = await run(["agent", "--detach", ...PLACED, "--sandbox", "workspace", "mock/echo", "hi"], cannot);
  expect(placed.code).toBe(0);
  expect(await sandboxOf(placed.json.data.id)).toBe("workspace");
});

describe("li mcp --sandbox workspace is a floor", () => {
  const placed = { host: "elsewhere", allow_new_host: true, cwd: "/" };

  test("no op lowers it: sandbox off is refused naming the floor and nothing is written; an op naming none, or a profile saying off, runs workspace", async () => {
    settings("profiles:\n  open: {model: mock/echo, sandbox: off}\n");
    const m = await connectMcp(h.env, ["--sandbox", "workspace"]);
    try {
      for (const verb of ["agent.submit", "fanout.submit"]) {
        const fp = await m.fingerprint(verb);
        const args = verb === "agent.submit" ? { model: "mock/echo", prompt: "hi", sandbox: "off", ...placed } : { model: "mock/echo", prompt: "hi", num_workers: 1, sandbox: "off", ...placed };
        const r = await m.op(verb, args, fp);
        expect(r.ok).toBe(false);
        expect(r.error.code).toBe("invalid_args");
        expect(r.error.params).toEqual(["sandbox"]);
        expect(r.error.message).toContain("floor is workspace");
      }
      expect(fs.existsSync(path.join(h.home, "state.db")) ? await count() : 0).toBe(0);
      const plain = await m.submit("agent.submit", { model: "mock/echo", prompt: "hi", ...placed });
      expect(await sandboxOf(plain.id)).toBe("workspace");
      const profiled = await m.submit("agent.submit", { profile: "open", prompt: "hi", ...placed });
      expect(await sandboxOf(profiled.id)).toBe("workspace");
      const flow = await m.submit("flow.submit", { model: "mock/echo", prompt: "hi", ...placed });
      expect(await sandboxOf(flow.id)).toBe("workspace");
      // A schedule made under the floor keeps it for every fire, though the fire runs without it.
      await m.submit("schedule.create", { name: "floored", every: "1h", ...placed, action: ["mock/echo", "hi"] });
      const fired = await liData(["schedule", "trigger", "floored"], { env: h.env, cwd: dir });
      expect(await sandboxOf(fired.id)).toBe("workspace");
      await m.submit("schedule.create", { name: "floored-fanout", every: "1h", action: ["fanout", "-n", "1", "--host", "elsewhere", "--allow-new-host", "--cwd", "/", "--model", "mock/echo", "hi"] });
      const firedFan = await liData(["schedule", "trigger", "floored-fanout"], { env: h.env, cwd: dir });
      expect(await sandboxOf(firedFan.id)).toBe("workspace");
    } finally {
      await m.close();
    }
  });

  test("under the default floor (off) an op may ask for workspace, or off", async () => {
    const m = await connectMcp(h.env);
    try {
      const up = await m.submit("agent.submit", { model: "mock/echo", prompt: "hi", sandbox: "workspace", ...placed });
      expect(await sandboxOf(up.id)).toBe("workspace");
      const down = await m.submit("agent.submit", { model: "mock/echo", prompt: "hi", sandbox: "off", ...placed });
      expect(await sandboxOf(down.id)).toBe("off");
      const bad = await m.op("agent.submit", { model: "mock/echo", prompt: "hi", sandbox: "sometimes", ...placed }, await m.fingerprint("agent.submit"));
      expect(bad.ok).toBe(false);
      expect(bad.error.params).toEqual(["sandbox"]);
    } finally {
      await m.close();
    }
  });
});

test("li doctor says whether this host can sandbox and what it lacks, failing only when a run asks for it; it warns of a profile with its provider's checks off whose runs are not sandboxed", async () => {
  settings("profiles:\n  wild: {model: claude/sonnet, permission_mode: bypassPermissions}\n  tame: {model: gemini/gemini-2.5-pro, permission_mode: yolo, sandbox: workspace}\n");
  const can = await run(["doctor"]);
  const checks = (r: typeof can) => (r.json.data ?? r.json.error.detail).checks as any[];
  expect(checks(can).find((c) => c.check === "sandbox")).toMatchObject({ ok: true, detail: expect.stringContaining("can sandbox") });
  const warned = checks(can).filter((c) => c.check === "sandbox_permissions");
  expect(warned).toEqual([expect.objectContaining({ ok: true, warning: true, detail: expect.stringContaining("profile wild"), fix: expect.stringContaining("sandbox: workspace") })]);
  expect((await li(["doctor"], { env: h.env, cwd: dir })).stdout).toMatch(/WARN\s+sandbox_permissions\s+profile wild/);

  // A host that cannot: a failure naming the piece and the fix, since profile tame asks for workspace.
  const cannot = await run(["doctor"], { LI_TEST_SANDBOX_UNAVAILABLE: "socat" });
  expect(cannot.code).toBe(1);
  expect(checks(cannot).find((c) => c.check === "sandbox")).toMatchObject({ ok: false, detail: expect.stringContaining("socat is missing"), fix: expect.stringContaining("apt-get install") });

  // The settings default covers every profile: no warning, and nothing asks beyond what the host can.
  settings("sandbox: workspace\nprofiles:\n  wild: {model: claude/sonnet, permission_mode: bypassPermissions}\n");
  expect(checks(await run(["doctor"])).filter((c) => c.check === "sandbox_permissions")).toEqual([]);
  settings("");
  expect(checks(await run(["doctor"], { LI_TEST_SANDBOX_UNAVAILABLE: "socat" })).find((c) => c.check === "sandbox")).toMatchObject({ ok: true, info: true });
});

describePostgres("two hosts on PostgreSQL: each says whether it can sandbox", () => {
  const shared = useSharedStore(["can-host", "cannot-host"]);
  const [able, unable] = shared.homes;

  test("li host list on one host shows the other's capability; a run placed with workspace on the host that cannot ends failed, sandbox_unavailable, naming that host and the missing piece", async () => {
    const a = startDaemon(able);
    const b = startDaemon(unable, { env: { LI_TEST_SANDBOX_UNAVAILABLE: "bubblewrap" } });
    try {
      const listed = await until(async () => {
        const l = await liData(["host", "list"], { env: able.env });
        const by = Object.fromEntries(l.hosts.map((x: any) => [x.host, x]));
        return by["can-host"]?.sandbox && by["cannot-host"]?.sandbox ? by : null;
      }, 30000);
      expect(listed!["can-host"].sandbox).toMatchObject({ ok: true });
      expect(listed!["cannot-host"].sandbox).toMatchObject({ ok: false, missing: "bubblewrap", remedy: expect.stringContaining("apt-get install") });
      expect((await li(["host", "list"], { env: able.env })).stdout).toContain("cannot-host cannot sandbox a run (bubblewrap is missing)");

      // Accepted where it is submitted (placed: the host that runs it decides), refused there.
      const sub = await liData(["agent", "--detach", "--host", "cannot-host", "--cwd", "/", "--sandbox", "workspace", "mock/echo", "hi"], { env: able.env });
      const end = await untilStatus(able.env, sub.id, (j) => j.status === "failed", 30000);
      expect(end).toMatchObject({ reason_code: "invocation.failed.sandbox_unavailable", host: "cannot-host", sandbox: { mode: "workspace" } });
      const failed = (await events(able, sub.id)).find((e) => e.to_status === "failed")!;
      expect(JSON.parse(failed.detail!)).toMatchObject({ host: "cannot-host", missing: "bubblewrap" });
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
