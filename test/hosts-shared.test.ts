/**
 * Two hosts on one PostgreSQL store (issue 19): a host never reads /proc for, signals, reaps or
 * promotes another host's runs. Each "host" is a LI_HOME and a LI_HOST of its own; both run on this
 * machine, so another host's pids would name real processes here: reading them is exactly the
 * mistake these tests would catch.
 */
import fs from "node:fs";
import path from "node:path";
import { rows } from "./helpers/fixtures.js";
import { readyHang, useSharedStore } from "./helpers/hosts.js";
import { li, liData, liveMembers, until } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("two hosts sharing one store", () => {
  // What a host leaves running is stopped after the block from that host (the only host that may).
  const [a, b] = useSharedStore(["host-a", "host-b"]).homes;

  /** A mock/hang run on host a whose agent is ready; its record. */
  const hanging = () => readyHang(a);

  test("another host's running run is never reaped from here (no daemon there: stopped_without_end, host_has_no_lease); its own host reaps it once its processes are gone", async () => {
    const j = await hanging();
    expect(j.host).toBe("host-a");
    // Its processes die without an end: only host a has the evidence.
    process.kill(-j.pgid, "SIGKILL");
    await until(() => liveMembers(j.pgid).length === 0);
    // Host a runs no daemon, so no lease vouches for the run (host-liveness.test: with one, pending).
    const fromB = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: b.env });
    expect(fromB.stopped_without_end).toEqual([j.id]);
    expect(fromB.entries[0]).toMatchObject({ status: "running", host: "host-a", terminal: false, possibly_orphaned: false, detail: { reason: "host_has_no_lease", host: "host-a" } });
    expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [j.id]))[0].status).toBe("running");
    const fromA = await liData(["wait", j.id, "--max-wait-seconds", "0"], { env: a.env });
    expect(fromA.entries[0]).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone", host: "host-a" });
  });

  test("li kill of another host's running run, with no daemon there, is a pending request: nothing is written to the run and nothing signalled here", async () => {
    const j = await hanging();
    const before = await rows(a, "SELECT * FROM events WHERE entity_id = ? ORDER BY id", [j.id]);
    const r = await li(["--machine", "kill", "--grace", "0", "--wait-seconds", "0", j.id], { env: b.env });
    expect(r.code).not.toBe(0);
    expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "pending_on_host", id: j.id, host: "host-a", request_id: expect.any(String) } });
    expect(r.json.error.message).toContain("li host run");
    expect(await rows(a, "SELECT * FROM events WHERE entity_id = ? ORDER BY id", [j.id])).toEqual(before);
    expect(liveMembers(j.pgid).length).toBeGreaterThan(0);
    // Its console is host a's: host b reads what host a shipped to the store (mock/hang prints
    // nothing), never a local path.
    const out = await liData(["job", "output", j.id], { env: b.env });
    expect(out).toMatchObject({ id: j.id, host: "host-a", status: "running", output: "", console_from: "store", console_log: null });
    expect((await liData(["job", "output", j.id], { env: a.env })).host).toBe("host-a");
    // From its own host the kill does what it always did.
    const own = await liData(["kill", "--grace", "0", j.id], { env: a.env });
    expect(own.entities[0]).toMatchObject({ id: j.id, action: "cancelled", signals: ["SIGTERM", "SIGKILL"], process_gone: true });
  });

  test("a host promotes only its own queued runs; a queued run is cancelled from any host", async () => {
    fs.writeFileSync(path.join(a.home, "settings.yaml"), "max_parallel: 1\n");
    const first = await hanging();
    const queued = await liData(["agent", "--detach", "mock/echo", "second"], { env: a.env });
    expect(queued.status).toBe("queued");
    // Host b has no limit and commands that promote; host a's line is not its to start.
    await liData(["job", "list"], { env: b.env });
    await liData(["wait", queued.id, "--max-wait-seconds", "0"], { env: b.env });
    expect((await rows(a, "SELECT status, pid FROM entities WHERE id = ?", [queued.id]))[0]).toEqual({ status: "queued", pid: null });
    // Nothing runs yet, so nothing needs its host: cancelled from b at once.
    const k = await liData(["kill", queued.id], { env: b.env });
    expect(k.entities).toEqual([expect.objectContaining({ id: queued.id, previous_status: "queued", action: "cancelled", signals: [] })]);
    expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [queued.id]))[0].status).toBe("cancelled");
    await li(["kill", "--grace", "0", first.id], { env: a.env });
    fs.rmSync(path.join(a.home, "settings.yaml"));
  });
});
