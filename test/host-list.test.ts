/**
 * li host list and li host forget (issue 19), on one PostgreSQL store shared by two "hosts"
 * (two LI_HOMEs with their own LI_HOST, both on this machine). The list shows every host seen,
 * its lease judged by the store's clock and its runs; host.list answers the same over MCP, and
 * host.forget is fenced from it. Forgetting a gone host ends its unfinished runs lost on the
 * operator's word, in one transaction; an alive lease is refused; runs placed for it by name stay.
 */
import { rows, untilStatus } from "./helpers/fixtures.js";
import { type Daemon, startDaemon, useSharedStore } from "./helpers/hosts.js";
import { type Home, li, liData, liveMembers, spentAtLeast, until } from "./helpers/li.js";
import { connectMcp, type McpSession } from "./helpers/mcp.js";
import { describePostgres } from "./helpers/postgres.js";

describePostgres("li host list and li host forget on a shared store", () => {
  /** Process groups of runs these tests leave running on purpose (forgotten hosts' runs). */
  const groups: number[] = [];
  let m: McpSession | undefined;
  const [a, b] = useSharedStore(["host-a", "host-b"], {
    cleanup: async () => {
      await m?.close();
      for (const g of groups) if (liveMembers(g).length) process.kill(-g, "SIGKILL");
    },
  }).homes;

  /** `li host run` for `h`'s host, beating every 0.2 s under a 3 s lease; resolves once its lease shows alive. */
  async function daemon(h: Home, leaseSeconds = 3): Promise<Daemon> {
    const d = startDaemon(h, { leaseSeconds });
    await until(async () => (await hostOf(b, h.env.LI_HOST!))?.lease === "alive" && (await hostOf(b, h.env.LI_HOST!))?.pid === d.pid);
    return d;
  }

  async function hostOf(reader: Home, name: string): Promise<any> {
    return (await liData(["host", "list"], { env: reader.env })).hosts.find((x: any) => x.host === name);
  }

  /** A mock/hang run on `h`'s host, running; its record. Its process group is stopped after the file. */
  async function hanging(h: Home): Promise<any> {
    const run = await liData(["agent", "--detach", "mock/hang", "x"], { env: h.env });
    const j = await untilStatus(h.env, run.id, (j) => j.status === "running" && j.pid);
    groups.push(j.pgid);
    return j;
  }

  test("a daemon's lease is alive, then expired once SIGTERM ends it or it dies; ages by the store's clock; runs counted by host and placement", async () => {
    const run = await hanging(a);
    // A 10 s lease: the stop and the reads after it must fit inside it even on a loaded machine.
    const d = await daemon(a, 10);
    // Placed by name for a host nothing registered: listed with lease none.
    const forC = await liData(["agent", "--detach", "--host", "host-c", "--allow-new-host", "mock/echo", "for c"], { env: b.env });
    expect(forC.status).toBe("queued");

    const list = await liData(["host", "list"], { env: b.env });
    expect(list.hosts.map((x: any) => x.host)).toEqual(["host-a", "host-c"]);
    expect(list).toMatchObject({ placed_any: 0, count: 2 });
    const alive = list.hosts[0];
    expect(alive).toMatchObject({ host: "host-a", lease: "alive", epoch: 1, max_parallel: 4, pid: d.pid, stopped_at: null, preparing: 0, queued: 0, running: 1, placed: 0 });
    expect(alive.heartbeat_age_seconds).toBeGreaterThanOrEqual(0);
    // Alive means its last heartbeat is younger than the lease it renewed.
    expect(alive.heartbeat_age_seconds).toBeLessThan((Date.parse(alive.lease_until) - Date.parse(alive.heartbeat_at)) / 1000);
    expect(Date.parse(alive.lease_until)).toBeGreaterThan(Date.parse(alive.heartbeat_at));
    expect(list.hosts[1]).toEqual({
      host: "host-c", lease: "none", heartbeat_age_seconds: null, epoch: null, max_parallel: null, pid: null,
      started_at: null, heartbeat_at: null, lease_until: null, stopped_at: null, preparing: 0, queued: 0, running: 0, placed: 1, sandbox: null,
    });
    expect(run.host).toBe("host-a");

    // SIGTERM: exit 0, the stop recorded, the lease left to run out (a restart is no outage); then
    // its age grows by the store's clock.
    expect(await d.stop()).toBe(0);
    // The stop did not cut the lease short.
    const [row] = await rows(a, "SELECT lease_until, heartbeat_at, stopped_at FROM hosts WHERE name = 'host-a'");
    expect(row.stopped_at).not.toBeNull();
    expect((Date.parse(row.lease_until) - Date.parse(row.heartbeat_at)) / 1000).toBeCloseTo(10, 0);
    const [machineView, humanView] = await Promise.all([hostOf(b, "host-a"), li(["host", "list"], { env: b.env })]);
    expect(machineView).toMatchObject({ lease: "alive", stopped_at: expect.any(String), running: 1 });
    expect(humanView.stdout).toMatch(/^host-a\s+alive \(stopped\)\s/m);
    const stopped = await until(async () => {
      const h = await hostOf(b, "host-a");
      return h.lease === "expired" ? h : null;
    }, 20000);
    expect(stopped).toMatchObject({ stopped_at: expect.any(String), running: 1 });
    await new Promise((r) => setTimeout(r, 1200));
    // Its age is the store's clock less its last heartbeat: between what the store's clock said
    // just before and just after li read it (to li's tenth of a second).
    const storeAge = async () => {
      const [{ now, beat }] = await rows(a, `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now, heartbeat_at AS beat FROM hosts WHERE name = 'host-a'`);
      return (Date.parse(now) - Date.parse(beat)) / 1000;
    };
    const ageBefore = await storeAge();
    const later = await hostOf(b, "host-a");
    const ageAfter = await storeAge();
    spentAtLeast(later.heartbeat_age_seconds - stopped.heartbeat_age_seconds, 1.1, "the age's growth over 1.2 s");
    expect(later.heartbeat_age_seconds).toBeGreaterThanOrEqual(Math.floor(ageBefore * 10) / 10 - 0.05);
    expect(later.heartbeat_age_seconds).toBeLessThanOrEqual(Math.ceil(ageAfter * 10) / 10 + 0.05);
    const human = await li(["host", "list"], { env: b.env });
    expect(human.stdout).toMatch(/^HOST\s+LEASE\s+HEARTBEAT\s.*RUNNING\s+QUEUED\s+PLACED\s+SANDBOX$/m);
    expect(human.stdout).toMatch(/^host-a\s+expired \d+(\.\d)?s ago \(stopped\)\s/m);
    expect(human.stdout).toMatch(/^host-c\s+none\s/m);
    expect(human.stdout).toContain("placed for any host, unclaimed: 0");

    // A daemon that dies holds its lease until it runs out (3 s here); a new registration is a new epoch.
    const d2 = await daemon(a);
    expect((await hostOf(b, "host-a")).epoch).toBe(2);
    d2.proc.kill("SIGKILL");
    await d2.exited;
    const lapsed = await until(async () => ((await hostOf(b, "host-a")).lease === "expired" ? hostOf(b, "host-a") : null), 10000, 200);
    expect(lapsed).toMatchObject({ epoch: 2, stopped_at: null, pid: d2.pid });
    expect(lapsed.heartbeat_age_seconds).toBeGreaterThanOrEqual(3);
    // Placed for any host: counted apart, as nothing holds a lease to claim it.
    const any = await liData(["agent", "--detach", "--host", "any", "mock/echo", "for anyone"], { env: b.env });
    expect((await liData(["host", "list"], { env: b.env })).placed_any).toBe(1);
    await liData(["kill", any.id], { env: b.env });
    // About thirty li commands and three daemons in a row: a loaded machine takes more than jest's minute.
  }, 180_000);

  test("host.list over MCP is what li host list prints; host.forget is fenced", async () => {
    m = await connectMcp(b.env);
    const r = await m.op("host.list", {});
    expect(r.ok).toBe(true);
    const cli = await liData(["host", "list"], { env: b.env });
    const ages = (d: any) => d.hosts.map((x: any) => x.heartbeat_age_seconds);
    const rest = (d: any) => ({ ...d, hosts: d.hosts.map((x: any) => ({ ...x, heartbeat_age_seconds: typeof x.heartbeat_age_seconds })) });
    expect(rest(r.result)).toEqual(rest(cli));
    // The same heartbeats (rest() compared heartbeat_at), read by the CLI after MCP: an age no younger.
    ages(r.result).forEach((age: number | null, i: number) => (age === null ? expect(ages(cli)[i]).toBeNull() : expect(ages(cli)[i]).toBeGreaterThanOrEqual(age)));

    expect(await m.call({ help: "host.forget" })).toEqual({ verb: "host.forget", available: false, reason: expect.stringMatching(/fenced/) });
    const f = await m.op("host.forget", { name: "host-a", yes: true });
    expect(f.error).toMatchObject({ code: "verb_unavailable", reason: expect.stringMatching(/fenced/) });
    expect((await m.call({ help: true })).catalog.map((c: any) => c.verb)).toContain("host.list");
    // Nothing was forgotten.
    expect(await rows(a, "SELECT name FROM hosts")).toEqual([{ name: "host-a" }]);
  });

  test("li host forget: refused while the lease is alive and for this host; a dry run by default; then the gone host's runs end lost on the operator's word, and runs placed for it stay queued", async () => {
    const flow = await liData(["o", "flow", "--detach", "--model", "mock/hang", "goal\n- a"], { env: a.env });
    const step = await until(async () => (await liData(["state", "show", flow.id], { env: a.env })).children.find((c: any) => c.status === "running" && c.pid), 20000, 200);
    groups.push(step.pgid);
    const run = (await liData(["job", "list", "--limit", "100"], { env: a.env })).jobs.find((j: any) => j.status === "running" && j.kind === "invocation" && j.parent_id === null);
    const d = await daemon(a);
    const before = await rows(a, "SELECT * FROM events ORDER BY id");

    const refused = await li(["--machine", "host", "forget", "host-a", "--yes"], { env: b.env });
    expect([refused.code, refused.json.error.kind, refused.json.error.detail.reason]).toEqual([1, "conflict", "host_lease_alive"]);
    expect(refused.json.error.message).toMatch(/stop li host run there first, or wait for the lease to expire/i);
    expect(await rows(a, "SELECT * FROM events ORDER BY id")).toEqual(before);
    expect((await rows(a, "SELECT name FROM hosts")).length).toBe(1);
    expect(await d.stop()).toBe(0);
    // A clean stop leaves the lease to run out (3 s here).
    await until(async () => (await liData(["host", "list"], { env: b.env })).hosts.find((h: any) => h.host === "host-a").lease === "expired", 10000, 200);
    // Expired, but host-a's own li may not forget host-a: its runs are reaped there.
    const self = await li(["--machine", "host", "forget", "host-a", "--yes"], { env: a.env });
    expect([self.code, self.json.error.kind, self.json.error.detail.reason]).toEqual([1, "conflict", "this_host"]);
    expect(await rows(a, "SELECT * FROM events ORDER BY id")).toEqual(before);

    // Placed for host-a by name while no daemon holds it: not host-a's run yet.
    const placed = await liData(["agent", "--detach", "--host", "host-a", "mock/echo", "for a"], { env: b.env });
    const mine = [run.id, flow.id, step.id].sort();

    const dry = await liData(["host", "forget", "host-a"], { env: b.env });
    expect(dry).toMatchObject({ host: "host-a", dry_run: true, known: true, lease: "expired", registered: true, kill_requests: 0 });
    expect(dry.would_end.map((e: any) => e.id).sort()).toEqual(mine);
    expect(dry.placed.map((p: any) => p.id)).toEqual([placed.id]);
    expect(await rows(a, "SELECT * FROM events ORDER BY id")).toEqual(before);
    const dryHuman = await li(["host", "forget", "host-a"], { env: b.env });
    expect(dryHuman.stdout).toContain("li host forget host-a --yes would");

    const done = await liData(["host", "forget", "host-a", "--yes"], { env: b.env });
    expect(done).toMatchObject({ host: "host-a", dry_run: false, known: true, lease: "expired", forced: false, dropped: true, skipped: [], kill_requests_failed: 0 });
    expect(done.ended.map((e: any) => e.id).sort()).toEqual(mine);
    // The step ends before its flow.
    expect(done.ended.map((e: any) => e.id).indexOf(step.id)).toBeLessThan(done.ended.map((e: any) => e.id).indexOf(flow.id));
    for (const e of done.ended) expect(e).toMatchObject({ status: "lost", reason_code: `${e.kind}.lost.host_forgotten` });
    expect(done.placed).toEqual([expect.objectContaining({ id: placed.id, status: "queued", place: "host-a" })]);

    const ev = await rows(a, "SELECT entity_id, from_status, to_status, reason_code, source, detail FROM events WHERE reason_code LIKE '%.host_forgotten' ORDER BY entity_id");
    expect(ev.map((e: any) => e.entity_id).sort()).toEqual(mine);
    for (const e of ev) expect([e.to_status, e.source, JSON.parse(e.detail)]).toEqual(["lost", "operator", { host: "host-a" }]);
    expect(await rows(a, "SELECT status, outcome FROM entities WHERE id = ?", [run.id])).toEqual([{ status: "lost", outcome: "indeterminate" }]);
    expect(await rows(a, "SELECT status, host, place FROM entities WHERE id = ?", [placed.id])).toEqual([{ status: "queued", host: null, place: "host-a" }]);
    expect(await rows(a, "SELECT name FROM hosts")).toEqual([]);
    expect(await hostOf(b, "host-a")).toMatchObject({ lease: "none", running: 0, preparing: 0, queued: 0, placed: 1 });

    // Again: nothing left of it but the placed run, which is reported again.
    const again = await liData(["host", "forget", "host-a", "--yes"], { env: b.env });
    expect(again).toMatchObject({ known: true, ended: [], dropped: false, placed: [expect.objectContaining({ id: placed.id })] });
    expect((await liData(["host", "forget", "nowhere", "--yes"], { env: b.env })).known).toBe(false);
    await liData(["kill", placed.id], { env: b.env });
  });

  test("--force forgets a host whose daemon still runs: the daemon stops at its next beat", async () => {
    const d = await daemon(a);
    const done = await liData(["host", "forget", "host-a", "--yes", "--force"], { env: b.env });
    expect(done).toMatchObject({ forced: true, lease: "alive", dropped: true });
    expect(await d.exited).not.toBe(0);
    expect(await rows(a, "SELECT name FROM hosts")).toEqual([]);
  });

  test("li doctor on a shared store: a host that only submits is info, not a failure; one whose daemon stopped, or one with runs placed on it by name, fails the hosts check with the fix", async () => {
    const alone = await liData(["doctor"], { env: b.env });
    expect(alone.checks.find((c: any) => c.check === "hosts")).toMatchObject({ ok: true, detail: expect.stringMatching(/only host-b uses this store/) });
    const da = await daemon(a);
    try {
      // Submit-only (the laptop of docs/hosts.md): a normal role, exit 0, said as info.
      const submitter = await li(["--machine", "doctor"], { env: b.env });
      expect(submitter.code).toBe(0);
      const role = submitter.json.data.checks.find((c: any) => c.check === "hosts");
      expect(role).toMatchObject({ ok: true, info: true, fix: null });
      expect(role.detail).toMatch(/^this host \(host-b\) submits only: it has never run li host run; 1 host\(s\) run daemons: host-a \(alive\)$/);
      expect(submitter.json.data.store).toMatchObject({ ok: true, kind: "postgres", path: expect.stringMatching(/^postgres:\/\//) });
      const human = await li(["doctor"], { env: b.env });
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/\n  info  hosts +this host \(host-b\) submits only/);

      // A run placed on it by name waits for a daemon it has never run: that is a problem.
      const placed = await liData(["agent", "--detach", "--host", "host-b", "--allow-new-host", "mock/echo", "for b"], { env: b.env });
      const waiting = await li(["--machine", "doctor"], { env: b.env });
      expect(waiting.code).toBe(1);
      const check = waiting.json.error.detail.checks.find((c: any) => c.check === "hosts");
      expect(check).toMatchObject({ ok: false, fix: expect.stringMatching(/li host run/) });
      expect(check.detail).toMatch(/host-b has never run a host daemon, yet 1 run\(s\) are placed on it by name/);
      await liData(["kill", placed.id], { env: b.env });

      const d = await daemon(b);
      const withDaemon = await liData(["doctor"], { env: b.env });
      expect(withDaemon.checks.find((c: any) => c.check === "hosts")).toMatchObject({ ok: true, detail: expect.stringMatching(/host-b: its daemon's lease is alive/) });
      expect(await d.stop()).toBe(0);
      // A host that runs a daemon, stopped past its lease: the failure doctor always reported.
      await until(async () => (await hostOf(a, "host-b"))?.lease === "expired", 15000, 200);
      const stopped = await li(["--machine", "doctor"], { env: b.env });
      expect(stopped.code).toBe(1);
      const expired = stopped.json.error.detail.checks.find((c: any) => c.check === "hosts");
      expect(expired).toMatchObject({ ok: false, fix: expect.stringMatching(/li host run/) });
      expect(expired.detail).toMatch(/host-b shares the store with \d+ other host\(s\).*its daemon's lease expired/);
    } finally {
      expect(await da.stop()).toBe(0);
    }
  }, 180_000); // eleven li commands and two daemons: more than a minute on a loaded machine
});

