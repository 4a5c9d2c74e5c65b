/**
 * --host on the embedded store (issue 19): a placed run waits, unowned, for a host daemon; the
 * daemon on this machine claims it and starts it here, with its prompt from the store. Bad host
 * names are refused before anything is written, on the CLI and over MCP (the projected pattern).
 */
import { events, rows, terminal, useHomes } from "./helpers/fixtures.js";
import { startDaemon, startedDaemons } from "./helpers/hosts.js";
import { li, liData } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";

describe("placement with --host on SQLite", () => {
  const homes = useHomes({ procs: startedDaemons, stopRuns: true });

  const daemon = (env: NodeJS.ProcessEnv) => startDaemon(env, { machine: true, pollSeconds: 0.1 });

  test("a placed run waits with no host and no directory until a daemon claims it, then runs here with its prompt", async () => {
    const h = homes();
    const env = { ...h.env, LI_HOST: "box-1" };
    const prompt = "a prompt that lives in the store until a host claims it ✓ with multi-byte text";
    const r = await liData(["agent", "--host", "any", "mock/echo", prompt], { env });
    // Returned at once, foreground or not: its console will be on whichever host claims it.
    expect(r).toMatchObject({ status: "queued", place: "any", pid: null, console_log: null, run_dir: null, queue_position: 1 });
    const waiting = await liData(["job", "status", r.id], { env });
    expect(waiting.jobs[0]).toMatchObject({ status: "queued", host: null, place: "any", placement: "pending", queue_position: 1 });
    // No daemon: nothing promotes it, however many commands run.
    await liData(["job", "list"], { env });
    expect((await rows(h, "SELECT status FROM entities WHERE id = ?", [r.id]))[0].status).toBe("queued");

    const d = daemon(env);
    const done = await terminal(env, r.id);
    expect(done).toMatchObject({ status: "completed", host: "box-1", place: "any" });
    expect((await liData(["job", "output", r.id], { env })).output).toBe(prompt);
    const path = (await events(h, r.id)).map((e) => `${e.to_status}:${e.reason_code}`);
    expect(path).toEqual(["preparing:invocation.preparing.claimed", "running:invocation.running.spawned", "completed:invocation.completed.exit_zero"]);
    expect(await d.stop()).toBe(0);
    const summary = JSON.parse(d.log().trim().split("\n").at(-1)!);
    expect(summary.data).toMatchObject({ host: "box-1", started: 1, stopped_by: "SIGTERM" });
  });

  test("--host NAME is claimed only by that host's daemon", async () => {
    const h = homes();
    daemon({ ...h.env, LI_HOST: "box-2" });
    const r = await liData(["agent", "--detach", "--host", "box-3", "--allow-new-host", "mock/echo", "for box-3"], { env: { ...h.env, LI_HOST: "box-2" } });
    // A run placed for box-2 after it, claimed by box-2's daemon: that claim pass saw box-3's run too, and left it.
    const probe = await liData(["agent", "--detach", "--host", "box-2", "--allow-new-host", "mock/echo", "for box-2"], { env: { ...h.env, LI_HOST: "box-2" } });
    expect(await terminal(h.env, probe.id)).toMatchObject({ status: "completed", host: "box-2" });
    expect((await rows(h, "SELECT status, host FROM entities WHERE id = ?", [r.id]))[0]).toEqual({ status: "queued", host: null });
    daemon({ ...h.env, LI_HOST: "box-3" });
    expect(await terminal(h.env, r.id)).toMatchObject({ status: "completed", host: "box-3" });
  });

  test.each([
    ["a space", "bad name"],
    ["a leading dash", "-x"],
    ["64 characters", "h".repeat(64)],
    ["a slash", "a/b"],
    ["an empty name", ""],
  ])("--host with %s is refused before anything is written", async (_what, value) => {
    const h = homes();
    const r = await li(["--machine", "agent", `--host=${value}`, "mock/echo", "x"], { env: h.env });
    expect(r.code).toBe(2);
    expect(r.json.error.kind).toBe("invalid_input");
    expect(r.json.error.message).toMatch(/host/);
    expect(await rows(h, "SELECT id FROM entities").catch(() => [])).toEqual([]);
  });

  test("over MCP: host is a spawn verb's argument, checked by its projected pattern; a placed run is waited on like any other", async () => {
    const h = homes();
    const env = { ...h.env, LI_HOST: "box-4" };
    const m = await connectMcp(env);
    try {
      const help = await m.call({ help: "agent.submit" });
      expect(help.schema.properties.host).toMatchObject({ type: "string", pattern: expect.stringContaining("any") });
      const bad = await m.op("agent.submit", { model: "mock/echo", prompt: "x", host: "no spaces allowed" }, help.schema_fingerprint);
      expect(bad).toMatchObject({ ok: false, error: { code: "invalid_args", schema: expect.any(Object) } });
      const sub = await m.submit("agent.submit", { model: "mock/echo", prompt: "placed over MCP", host: "any" });
      expect(sub).toMatchObject({ status: "queued", place: "any", pid: null });
      daemon(env);
      expect(await m.waitTerminal(sub.id, 30)).toMatchObject({ status: "completed", host: "box-4" });
    } finally {
      await m.close();
    }
  });
});
