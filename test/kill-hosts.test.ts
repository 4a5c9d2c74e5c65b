/**
 * Kill from any host (issue 19, ADR D5): on a shared store, li kill of a run whose processes run
 * on another host records a kill request; that host's daemon (li host run) carries it out with
 * li kill's own semantics, and the requester reports the outcome. Unanswered, the request stays
 * pending and the record is left as it was; a run with no process yet is cancelled from anywhere.
 */
import { rows, untilStatus } from "./helpers/fixtures.js";
import { type Daemon, readyHang, startDaemon, useSharedStore } from "./helpers/hosts.js";
import { li, liData, liveMembers, until } from "./helpers/li.js";
import { connectMcp } from "./helpers/mcp.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("li kill from another host", () => {
  const [a, b] = useSharedStore(["host-a", "host-b"]).homes;

  /** Host a's daemon, started; stop it with stopDaemon. */
  const startA = () => startDaemon(a);
  async function stopDaemon(d: Daemon): Promise<void> {
    expect(await d.stop()).toBe(0);
  }

  /** A mock/hang run on host a whose agent is ready; its record. */
  const hanging = () => readyHang(a);

  /**
   * The store's clock now, then: whether a li kill connected since then is polling request `rid`
   * (li kill's wait reads that one row by id every 200 ms, and nothing else does). PostgreSQL's
   * pg_stat_activity shows each connection's latest statement; a kill that has reached its wait
   * has looked the request up already, so withdrawing it now cannot race that look-up.
   */
  async function storeNow(): Promise<string> {
    return (await rows(b, "SELECT now()::text AS t"))[0].t;
  }
  async function pollingRequest(since: string): Promise<boolean> {
    const r = await rows(b, "SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_start >= ?::timestamptz AND query LIKE 'SELECT * FROM kill_requests WHERE id = %'", [since]);
    return Number(r[0].n) > 0;
  }

  test("host b kills host a's running run through host a's daemon: cancelled there, its processes gone, reported here as a local kill would be", async () => {
    const d = startA();
    try {
      const j = await hanging();
      const k = await liData(["kill", "--grace", "0", "--wait-seconds", "30", j.id], { env: b.env });
      expect(k).toMatchObject({ id: j.id, kind: "invocation", targets: [j.id], partial: false, carried_out_by: { host: "host-a" } });
      expect(k.entities[0]).toMatchObject({ id: j.id, previous_status: "running", status: "cancelled", action: "cancelled", reason_code: "invocation.cancelled.killed", process_gone: true });
      expect(k.entities[0].signals[0]).toBe("SIGTERM");
      expect(k.kills).toEqual([expect.objectContaining({ id: j.id, carried_out_by: expect.objectContaining({ host: "host-a" }), request_id: expect.stringMatching(/^krq_/) })]);
      expect(k.requests).toEqual([{ id: j.id, host: "host-a", request_id: k.kills[0].request_id, status: "done" }]);
      expect(liveMembers(j.pgid)).toEqual([]);
      const ev = await rows(a, "SELECT source, to_status FROM events WHERE entity_id = ? ORDER BY id", [j.id]);
      expect(ev[ev.length - 1]).toMatchObject({ source: "admin", to_status: "cancelled" });
      expect((await rows(a, "SELECT status, host, requested_by FROM kill_requests WHERE id = ?", [k.kills[0].request_id]))[0]).toEqual({ status: "done", host: "host-a", requested_by: "host-b" });
    } finally {
      await stopDaemon(d);
    }
  });

  test("with no daemon on host a the request stays pending_on_host, nothing is written or signalled; host a's daemon carries it out when it starts", async () => {
    const j = await hanging();
    const before = await rows(a, "SELECT * FROM events WHERE entity_id = ? ORDER BY id", [j.id]);
    const dry = await liData(["kill", "--dry-run", j.id], { env: b.env });
    expect(dry.requests).toEqual([{ id: j.id, host: "host-a" }]);
    const r = await li(["--machine", "kill", "--grace", "0", "--wait-seconds", "1", j.id], { env: b.env });
    // It ended by itself once its 1 s wait was over (exit 1, not killed by li()'s deadline), with the request pending.
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "pending_on_host", id: j.id, host: "host-a", request_id: expect.stringMatching(/^krq_/) } });
    const rid = r.json.error.detail.request_id;
    expect(r.json.error.message).toContain(rid);
    expect(r.json.error.message).toContain("li host run");
    expect(await rows(a, "SELECT * FROM events WHERE entity_id = ? ORDER BY id", [j.id])).toEqual(before);
    expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [j.id]))[0].status).toBe("running");
    expect(liveMembers(j.pgid).length).toBeGreaterThan(0);
    expect((await rows(a, "SELECT status FROM kill_requests WHERE id = ?", [rid]))[0].status).toBe("pending");
    // Asked again, the pending request is waited on, not duplicated.
    const again = await li(["--machine", "kill", "--grace", "0", "--wait-seconds", "0", j.id], { env: b.env });
    expect(again.json.error.detail).toMatchObject({ reason: "pending_on_host", request_id: rid });
    expect(await rows(a, "SELECT id FROM kill_requests WHERE entity_id = ?", [j.id])).toEqual([{ id: rid }]);

    const d = startA();
    try {
      // Back, the daemon carries out the request that waited for it, at its first beat.
      await until(async () => (await rows(a, "SELECT status FROM kill_requests WHERE id = ?", [rid]))[0].status !== "pending", 30000, 100);
      expect((await rows(a, "SELECT status FROM kill_requests WHERE id = ?", [rid]))[0].status).toBe("done");
      expect((await rows(a, "SELECT status, reason_code FROM entities WHERE id = ?", [j.id]))[0]).toEqual({ status: "cancelled", reason_code: "invocation.cancelled.killed" });
      await until(() => liveMembers(j.pgid).length === 0);
      const result = JSON.parse((await rows(a, "SELECT result FROM kill_requests WHERE id = ?", [rid]))[0].result);
      expect(result).toMatchObject({ id: j.id, carried_out_by: { host: "host-a" }, entities: [expect.objectContaining({ id: j.id, action: "cancelled", process_gone: true })] });
    } finally {
      await stopDaemon(d);
    }
  });

  test("a kill pending on a host with no daemon says plainly that it will be carried out when the daemon returns, and how to withdraw it; li kill --withdraw (and job.kill withdraw over MCP) takes it back, and the daemon then never carries it out", async () => {
    const j = await hanging();
    const r = await li(["--machine", "kill", "--grace", "0", "--wait-seconds", "0", j.id], { env: b.env });
    expect(r.code).toBe(1);
    const rid = r.json.error.detail.request_id;
    expect(r.json.error.message).toMatch(new RegExp(`^kill request ${rid} is pending: .*The request stays pending and will be carried out when host-a's daemon \\(li host run\\) returns; .*To withdraw the request: li kill --withdraw ${rid}$`));
    expect(r.json.error.detail).toMatchObject({ reason: "pending_on_host", carried_out: "when the host's daemon returns", withdraw_with: `li kill --withdraw ${rid}` });
    // A person sees the same words.
    const human = await li(["kill", "--grace", "0", "--wait-seconds", "0", j.id], { env: b.env });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`will be carried out when host-a's daemon (li host run) returns`);
    expect(human.stderr).toContain(`To withdraw the request: li kill --withdraw ${rid}`);

    // A requester still waiting on it hears of the withdrawal as its answer: withdrawn once it is waiting.
    const since = await storeNow();
    const waiting = li(["--machine", "kill", "--grace", "0", "--wait-seconds", "30", j.id], { env: b.env });
    await until(() => pollingRequest(since), 20000, 50);
    const w = await liData(["kill", "--withdraw", rid], { env: b.env });
    expect(w).toEqual({ withdraw: true, targets: [j.id], entities: [], requests: [{ id: j.id, host: "host-a", request_id: rid, status: "withdrawn" }] });
    const waited = await waiting;
    expect(waited.json.error).toMatchObject({ kind: "conflict", detail: { reason: "kill_withdrawn", withdrawn_by: "host-b", request_id: rid } });
    expect((await rows(a, "SELECT status FROM kill_requests WHERE id = ?", [rid]))[0].status).toBe("failed");
    // Once withdrawn there is nothing left to withdraw: said, not silently accepted.
    const again = await li(["--machine", "kill", "--withdraw", rid], { env: b.env });
    expect(again.json.error).toMatchObject({ kind: "conflict", detail: { reason: "not_pending", request_id: rid, status: "failed" } });
    const byRun = await li(["--machine", "kill", "--withdraw", j.id], { env: b.env });
    expect(byRun.json.error).toMatchObject({ kind: "not_found", detail: { reason: "none_pending", id: j.id } });
    expect((await li(["--machine", "kill", "--withdraw", "--label", "x", j.id], { env: b.env })).json.error.kind).toBe("invalid_input");

    // Over MCP: the refusal carries the same words, and job.kill withdraw takes a request back by the run's id.
    const m = await connectMcp(b.env);
    try {
      const k = await m.op("job.kill", { id: j.id, grace: 0, wait_seconds: 0 });
      expect(k.ok).toBe(false);
      expect(JSON.stringify(k.error)).toContain("will be carried out when host-a's daemon (li host run) returns");
      expect(JSON.stringify(k.error)).toContain("li kill --withdraw krq_");
      const back = await m.op("job.kill", { id: j.id, withdraw: true });
      expect(back.ok).toBe(true);
      expect(back.result.requests).toEqual([expect.objectContaining({ id: j.id, host: "host-a", status: "withdrawn" })]);
    } finally {
      await m.close();
    }
    expect(await rows(a, "SELECT id FROM kill_requests WHERE entity_id = ? AND status = 'pending'", [j.id])).toEqual([]);

    // Host a's daemon returns: nothing is left for it to carry out, and the run goes on. A run
    // placed for host a, claimed by that daemon, proves it has been through its kill requests: each
    // beat takes them before it claims.
    const d = startDaemon(a, { machine: true });
    let summary: any;
    try {
      const probe = await liData(["agent", "--detach", "--host", "host-a", "mock/echo", "probe"], { env: b.env });
      await untilStatus(b.env, probe.id, (x) => x.terminal && x.host === "host-a", 30000);
      expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [j.id]))[0].status).toBe("running");
      expect(liveMembers(j.pgid).length).toBeGreaterThan(0);
    } finally {
      expect(await d.stop()).toBe(0);
      summary = d.json()?.data;
    }
    // It carried out no kill request at all (its summary counts each one it did).
    expect(summary).toMatchObject({ host: "host-a", kills: 0, started: 1 });
    expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [j.id]))[0].status).toBe("running");
    await li(["kill", "--grace", "0", j.id], { env: a.env });
  }, 180_000); // a dozen li commands, an MCP session and a daemon: more than a minute on a loaded machine

  test("a queued placed run has no host yet: cancelled at once from any host, no request recorded", async () => {
    const placed = await liData(["agent", "--detach", "--host", "any", "mock/echo", "x"], { env: a.env });
    expect(placed.status).toBe("queued");
    const k = await liData(["kill", placed.id], { env: b.env });
    // Cancelled here, at once: nothing was asked of any host, so nothing waited for an answer.
    expect(k.entities).toEqual([expect.objectContaining({ id: placed.id, previous_status: "queued", status: "cancelled", action: "cancelled", signals: [] })]);
    expect(k.requests).toBeUndefined();
    expect(await rows(a, "SELECT id FROM kill_requests WHERE entity_id = ?", [placed.id])).toEqual([]);
  });

  test("several ids: this host's own run is killed here, the other host's is asked of it", async () => {
    const theirs = await hanging();
    const ours = await liData(["agent", "--detach", "mock/sleep:30", "zzz"], { env: b.env });
    const mine = await untilStatus(b.env, ours.id, (j) => j.status === "running" && j.pid);
    const r = await li(["--machine", "kill", "--grace", "0", "--wait-seconds", "0", mine.id, theirs.id], { env: b.env });
    expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "pending_on_host", id: theirs.id, host: "host-a", targets: [mine.id, theirs.id] } });
    expect(r.json.error.detail.kills).toEqual([expect.objectContaining({ id: mine.id })]);
    expect(r.json.error.detail.entities[0]).toMatchObject({ id: mine.id, action: "cancelled", process_gone: true });
    expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [theirs.id]))[0].status).toBe("running");
    // The pending request is host a's to carry out; its own kill settles it meanwhile.
    await li(["kill", "--grace", "0", theirs.id], { env: a.env });
  });

  test("job.kill over MCP from host b: carried out by host a's daemon; without it, a pending_on_host refusal", async () => {
    const m = await connectMcp(b.env);
    try {
      const d = startA();
      try {
        const j = await hanging();
        const k = await m.op("job.kill", { id: j.id, grace: 0 });
        expect(k.ok).toBe(true);
        expect(k.result).toMatchObject({ id: j.id, carried_out_by: { host: "host-a" }, partial: false });
        expect(k.result.entities[0]).toMatchObject({ id: j.id, action: "cancelled", process_gone: true });
      } finally {
        await stopDaemon(d);
      }
      const j = await hanging();
      const k = await m.op("job.kill", { id: j.id, grace: 0, wait_seconds: 0 });
      expect(k.ok).toBe(false);
      expect(JSON.stringify(k.error)).toContain("pending_on_host");
      expect(k.error).toMatchObject({ code: "cli_error", kind: "conflict" });
      expect((await rows(a, "SELECT status FROM entities WHERE id = ?", [j.id]))[0].status).toBe("running");
      await li(["kill", "--grace", "0", j.id], { env: a.env });
    } finally {
      await m.close();
    }
  });

  // Last: it forgets host a.
  test("a kill waiting on a host that is then forgotten ends with that host's forgetting, as an error of its kind", async () => {
    const j = await hanging();
    try {
      const waiting = li(["--machine", "kill", "--grace", "0", "--wait-seconds", "30", j.id], { env: b.env });
      await until(async () => Number((await rows(a, "SELECT count(*) AS n FROM kill_requests WHERE entity_id = ? AND status = 'pending'", [j.id]))[0].n) > 0, 15000, 100);
      await liData(["host", "forget", "host-a", "--yes", "--force"], { env: b.env });
      const r = await waiting;
      expect(r.code).toBe(1);
      expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "host_forgotten", host: "host-a", id: j.id } });
      expect(r.json.error.message).toMatch(/^host host-a could not kill \S+ \(kill request krq_\w+\): host host-a was forgotten/);
    } finally {
      // Its record ended lost on the operator's word; its processes are this machine's to stop.
      if (liveMembers(j.pgid).length) process.kill(-j.pgid, "SIGKILL");
    }
  });
});

