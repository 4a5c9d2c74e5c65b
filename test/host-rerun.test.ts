/**
 * Rerun and resume keep their place (issue 22, section 2), on one PostgreSQL store with a host
 * daemon (host-a), a second registered host (host-b) and a laptop that only submits:
 * - li rerun (and the studio's Rerun) of a placed run is placed again as it was (--host moves it), and reads the stored
 *   request from the store, so it works from a host without the run's directory;
 * - li rerun of a run that ran on another host without placement is placed on that host;
 * - li agent --resume of a run of another host is placed on that host, where the provider's
 *   session is, or refused with that remedy; never run here against a missing session.
 */
import fs from "node:fs";
import path from "node:path";
import { rows, terminal } from "./helpers/fixtures.js";
import { startDaemon, useSharedStore, type Daemon } from "./helpers/hosts.js";
import { type Home, li, liData, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { installStandins } from "./helpers/standins.js";
import { postAction, startStudio } from "./helpers/studio.js";

describePostgres("rerun and resume keep their place", () => {
  const hosts = useSharedStore();

  /** host-a and host-b (with the stand-in agent CLIs) and a laptop, on a database of their own; host-a's daemon running, host-b registered. */
  async function team(): Promise<{ a: Home; b: Home; laptop: Home; da: Daemon; calls: () => any[] }> {
    const [a, b, laptop] = hosts().addHomes(["host-a", "host-b", "laptop"]);
    const s = installStandins(a.home);
    for (const h of [a, b, laptop]) Object.assign(h.env, s.env);
    const registered = (name: string) => until(async () => (await rows(a, "SELECT name FROM hosts WHERE name = ?", [name]))[0] ?? null, 30000);
    const db = startDaemon(b, { pollSeconds: 0.1 });
    await registered("host-b");
    await db.stop();
    const da = startDaemon(a, { pollSeconds: 0.1 });
    await registered("host-a");
    return { a, b, laptop, da, calls: s.calls };
  }

  test("li rerun of a placed run keeps its placement and reads its prompt from the store, from a host without its directory; --host moves it", async () => {
    const { a, laptop, da } = await team();
    const first = await liData(["agent", "--host", "any", "--cwd", "/", "mock/echo", "the stored prompt"], { env: laptop.env });
    const done = await terminal(laptop.env, first.id, 30000);
    expect(done).toMatchObject({ status: "completed", host: "host-a", place: "any" });
    // Its directory is on host-a's disk: as far as the laptop can tell, it is not there.
    fs.rmSync(done.run_dir, { recursive: true });

    const again = await liData(["rerun", first.id], { env: laptop.env });
    expect(again).toMatchObject({ status: "queued", place: "any", pid: null, rerun_of: first.id });
    const end = await terminal(laptop.env, again.id, 30000);
    expect(end).toMatchObject({ status: "completed", host: "host-a", place: "any" });
    expect((await liData(["job", "output", again.id], { env: a.env })).output).toBe("the stored prompt");

    // The studio's Rerun button on the laptop runs the same li rerun: placed as the run was.
    const studio = await startStudio(laptop.env);
    try {
      const r = await postAction(studio, { action: "rerun", target: first.id });
      expect(r.json.data.result).toMatchObject({ ok: true, data: { status: "queued", place: "any", rerun_of: first.id } });
      expect(await terminal(laptop.env, r.json.data.result.data.id, 30000)).toMatchObject({ status: "completed", host: "host-a" });
    } finally {
      await studio.stop();
    }

    // --host says otherwise: placed on host-b (registered, no daemon now), checked as a new submission's --host is.
    const moved = await liData(["rerun", "--detach", "--host", "host-b", first.id], { env: laptop.env });
    expect(moved).toMatchObject({ status: "queued", place: "host-b" });
    const typo = await li(["--machine", "rerun", "--host", "host-c", first.id], { env: laptop.env });
    expect(typo.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "host", host: "host-c", near: ["host-a", "host-b"] } });
    await li(["kill", moved.id], { env: laptop.env });
    expect(await da.stop()).toBe(0);
  });

  test("li rerun of a run that ran on another host, unplaced, is placed on that host (its prompt kept in the store)", async () => {
    const { a, laptop, da } = await team();
    const local = await liData(["agent", "--cwd", "/", "mock/echo", "ran on a"], { env: a.env });
    expect(local.status).toBe("completed");
    fs.rmSync(local.run_dir, { recursive: true });
    const again = await liData(["rerun", local.id], { env: laptop.env });
    expect(again).toMatchObject({ status: "queued", place: "host-a" });
    expect(await terminal(laptop.env, again.id, 30000)).toMatchObject({ status: "completed", host: "host-a" });
    expect((await liData(["job", "output", again.id], { env: a.env })).output).toBe("ran on a");
    // On its own host an unplaced run reruns here, as it always did (its prompt from the store: the directory is gone).
    const here = await liData(["rerun", local.id], { env: a.env });
    expect(here.status).toBe("completed");
    expect(here.place).toBeUndefined();
    expect((await liData(["job", "output", here.id], { env: a.env })).output).toBe("ran on a");
    expect(await da.stop()).toBe(0);
  });

  test("li agent --resume of another host's run is placed on that host, where its session is; another --host, or a host with no daemon, is refused with the remedy", async () => {
    const { a, b, laptop, da, calls } = await team();
    const dir = fs.mkdtempSync(path.join(a.home, "work-"));
    const first = await liData(["agent", "--host", "host-a", "--cwd", dir, "claude/opus", "success"], { env: laptop.env });
    const done = await terminal(laptop.env, first.id, 30000);
    expect(done).toMatchObject({ status: "completed", host: "host-a", provider_session_id: "sess-claude-1" });

    const next = await liData(["agent", "--resume", first.id, "resume"], { env: laptop.env });
    expect(next).toMatchObject({ status: "queued", place: "host-a", pid: null });
    const end = await terminal(laptop.env, next.id, 30000);
    expect(end).toMatchObject({ status: "completed", host: "host-a", resumes: first.id, provider_session_id: "sess-claude-1" });
    const call = calls().at(-1)!;
    expect(call.argv.slice(call.argv.indexOf("--resume"), call.argv.indexOf("--resume") + 2)).toEqual(["--resume", "sess-claude-1"]);
    expect(call.cwd).toBe(fs.realpathSync(dir));

    const elsewhere = await li(["--machine", "agent", "--resume", first.id, "--host", "host-b", "resume"], { env: laptop.env });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "host", session_host: "host-a", host: "host-b" } });
    expect(elsewhere.json.error.message).toContain("give --host host-a or leave out --host");

    // A run of the laptop, which runs no daemon: resumed from host-b, refused with the remedy; nothing runs on host-b.
    const mine = await liData(["agent", "--cwd", dir, "claude/opus", "success"], { env: laptop.env });
    expect(mine.status).toBe("completed");
    const before = calls().length;
    const refused = await li(["--machine", "agent", "--resume", mine.id, "resume"], { env: b.env });
    expect(refused.json.error).toMatchObject({ kind: "invalid_input", detail: { session_host: "laptop" } });
    expect(refused.json.error.message).toContain(`run li agent --resume ${mine.id} on laptop, or start li host run there`);
    expect(calls().length).toBe(before);
    expect(await da.stop()).toBe(0);
  });
});
