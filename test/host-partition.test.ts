/**
 * One host cut off from a shared store that stays up for the others (issue 19): host a reaches
 * PostgreSQL through a TCP proxy the test can cut; host b reaches it directly. While a is cut off
 * its lease expires and b shows a's running run stopped_without_end (host_lease_expired), never
 * lost. The run ends meanwhile; its worker cannot write the end and leaves it as evidence (end.json).
 * When the link heals, a's daemon finds its lease lapsed, registers again under a new epoch, and
 * publishes the end from the evidence: the run completes, once, as it really did.
 */
import net from "node:net";
import { rows } from "./helpers/fixtures.js";
import { killDaemons, startDaemon } from "./helpers/hosts.js";
import { type Home, liData, tempHome, until } from "./helpers/li.js";
import { untilJob } from "./helpers/poll.js";
import { describePostgres, workerCluster } from "./helpers/postgres.js";

/** A TCP proxy to `port` whose link can be cut (every connection dropped, new ones refused) and healed. */
async function cuttableProxy(port: number) {
  const open = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return client.destroy();
    const upstream = net.connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      for (const s of open) s.destroy();
    },
    heal() {
      cut = false;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describePostgres("a host cut off from the shared store, and back", () => {
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let a: Home;
  let b: Home;

  beforeAll(async () => {
    // The worker's cluster: the cut is the proxy's, the server itself stays up.
    const cluster = workerCluster();
    const url = cluster.createDatabase();
    proxy = await cuttableProxy(cluster.port);
    a = tempHome();
    b = tempHome();
    Object.assign(a.env, { LI_STORE: url.replace(`:${cluster.port}/`, `:${proxy.port}/`), LI_HOST: "host-a", LI_WORKER_RETRY_SECONDS: "1" });
    Object.assign(b.env, { LI_STORE: url, LI_HOST: "host-b" });
  });
  afterAll(async () => {
    killDaemons();
    await proxy?.close();
    a?.cleanup();
    b?.cleanup();
  });

  test("lease expiry shows the run stopped_without_end elsewhere; on return the daemon registers anew and publishes the end the worker left", async () => {
    const daemon = startDaemon(a, { leaseSeconds: 3 });
    // Placed from b, for a: it starts on a, its worker writing through the proxy.
    const run = await liData(["agent", "--host", "host-a", "--allow-new-host", "mock/sleep:5", "x"], { env: b.env });
    await untilJob(b.env, run.id, (j) => j.status === "running", 30000);
    expect((await liData(["wait", run.id, "--max-wait-seconds", "0"], { env: b.env })).pending).toEqual([run.id]);

    proxy.cut();
    // a's lease runs out by the store's clock: b shows the run stopped, not lost, and writes nothing.
    const seen = await until(async () => {
      const w = await liData(["wait", run.id, "--max-wait-seconds", "0"], { env: b.env });
      return w.stopped_without_end.length ? w : null;
    }, 15000, 200);
    expect(seen.entries[0]).toMatchObject({ status: "running", terminal: false, detail: { reason: "host_lease_expired", host: "host-a" } });
    // The run's five seconds pass while a is cut off; its worker gives up on the store (1 s) and leaves end.json.
    await new Promise((r) => setTimeout(r, 6000));
    expect((await rows(b, "SELECT status FROM entities WHERE id = ?", [run.id]))[0].status).toBe("running");

    proxy.heal();
    const done = await untilJob(b.env, run.id, (j) => j.terminal, 20000);
    expect(done).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero", host: "host-a" });
    const ends = await rows(b, "SELECT to_status, source FROM events WHERE entity_id = ? AND to_status NOT IN ('preparing', 'running') ORDER BY id", [run.id]);
    expect(ends).toEqual([{ to_status: "completed", source: "reaper" }]);
    const [host] = await rows(b, "SELECT epoch FROM hosts WHERE name = 'host-a'");
    expect(Number(host.epoch)).toBe(2);
    expect(daemon.log()).toMatch(/beat failed/);
    expect(daemon.log()).toMatch(/registered \(its lease lapsed/);
    expect(await daemon.stop()).toBe(0);
  }, 120000);
});
