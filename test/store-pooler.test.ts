/**
 * li behind a transaction-mode pooler (issue 49): Debian's PgBouncer in pool_mode = transaction,
 * with its default ignore_startup_parameters (none), in front of this jest worker's cluster, with
 * ONE server connection per database, so every li process's transactions take turns on it and a
 * later borrower sees whatever an earlier one left on it. Nothing li relies on may ride on
 * connection state: per-transaction settings are set inside each transaction, and no wake-up is
 * lost without li saying so.
 */
import fs from "node:fs";
import path from "node:path";
import { rows } from "./helpers/fixtures.js";
import { endedBefore, li, liData, tempHome, type Home } from "./helpers/li.js";
import { workerCluster } from "./helpers/pg-worker.mjs";
import { startPgbouncer } from "./helpers/pgbouncer.mjs";
import { describePooler } from "./helpers/pooler.js";

/** A query straight to `url` on a connection of its own (the test's, not li's). */
async function sql<T = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

describePooler("li through PgBouncer in transaction mode, one server connection", (pooler) => {
  let direct = "";
  let pooled = "";
  const homes: Home[] = [];
  /** A home whose store is the pooled URL. */
  const home = (extra: NodeJS.ProcessEnv = {}): Home => {
    const h = tempHome();
    Object.assign(h.env, { LI_STORE: pooled, ...extra });
    homes.push(h);
    return h;
  };

  beforeAll(async () => {
    direct = workerCluster().createDatabase({ migrated: true });
    pooled = pooler().url(direct);
    // The database's own default is the weaker one: li's writes must not inherit it.
    await sql(direct, `ALTER DATABASE "${new URL(direct).pathname.slice(1)}" SET synchronous_commit = off`);
    // Records, from inside each writing transaction, the synchronous_commit it runs with.
    await sql(
      direct,
      `CREATE TABLE li_test_commit_modes (at_table text, mode text);
       CREATE FUNCTION li_test_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO li_test_commit_modes VALUES (TG_TABLE_NAME, current_setting('synchronous_commit')); RETURN NULL; END $$;
       CREATE TRIGGER li_test_commit_mode AFTER INSERT OR UPDATE ON entities FOR EACH ROW EXECUTE FUNCTION li_test_commit_mode();
       CREATE TRIGGER li_test_commit_mode AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION li_test_commit_mode();`,
    );
  });
  afterAll(() => {
    for (const h of homes) h.cleanup();
  });

  test("li connects through it (no startup parameter for it to refuse), and its writes run with synchronous_commit on though the database's default is off", async () => {
    // What a connection to this database gets by default: off (so the rows below prove li's own SET LOCAL).
    expect(await sql(pooled, "SELECT current_setting('synchronous_commit') AS mode")).toEqual([{ mode: "off" }]);
    const h = home();
    const run = await liData(["agent", "mock/echo", "through the pooler"], { env: h.env });
    expect(run).toMatchObject({ status: "completed" });
    const modes = await sql(direct, "SELECT at_table, mode, count(*)::int AS n FROM li_test_commit_modes GROUP BY 1, 2 ORDER BY 1, 2");
    expect(modes.map((m) => [m.at_table, m.mode])).toEqual([
      ["entities", "on"],
      ["events", "on"],
    ]);
  });

  test("the studio's store connection cannot write, DDL included, though nothing on the connection says read-only", async () => {
    const h = home();
    const { openReaderStore } = await import("../src/lifecycle/open.js");
    const { dbOf } = await import("../src/lifecycle/db/handle.js");
    process.env.LI_HOME = h.home;
    process.env.LI_STORE = pooled;
    const store = await openReaderStore();
    try {
      const db = dbOf(store);
      // It reads.
      expect(await db.get("SELECT count(*) AS n FROM entities")).toEqual({ n: expect.any(Number) });
      // Every write is refused by the server, in a transaction of the reader's own or outside one.
      await expect(db.exec("CREATE TABLE li_test_studio_wrote (x int)")).rejects.toMatchObject({ code: "25006" });
      await expect(db.run("DELETE FROM entities")).rejects.toMatchObject({ code: "25006" });
      await expect(db.get("INSERT INTO meta (key, value) VALUES ('li_test', 'x') RETURNING key")).rejects.toMatchObject({ code: "25006" });
      await expect(db.tx(() => db.exec("CREATE TABLE li_test_studio_wrote (x int)"))).rejects.toMatchObject({ code: "25006" });
    } finally {
      await store.close();
      delete process.env.LI_STORE;
    }
    expect(await sql(direct, "SELECT to_regclass('li_test_studio_wrote') AS t")).toEqual([{ t: null }]);
    expect(await sql(direct, "SELECT count(*)::int AS n FROM meta WHERE key = 'li_test'")).toEqual([{ n: 0 }]);
  });

  test("20 concurrent submits through the one server connection stay exact: the cap holds, each has its own place in line, all complete", async () => {
    const h = home();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "max_parallel: 2\n");
    const subs = await Promise.all(Array.from({ length: 20 }, (_, i) => li(["--machine", "agent", "--detach", "mock/sleep:0.3", `run-${i}`], { env: h.env, timeoutMs: 90000 })));
    for (const r of subs) expect([r.code, r.json?.ok, r.stderr]).toEqual([0, true, ""]);
    const ids: string[] = subs.map((r) => r.json.data.id);
    expect(new Set(ids).size).toBe(20);
    const w = await liData(["wait", ...ids, "--max-wait-seconds", "50", "--poll-interval-seconds", "0.5"], { env: h.env });
    expect(w).toMatchObject({ all_terminal: true, timed_out: false });
    expect(w.entries.map((e: any) => e.status)).toEqual(ids.map(() => "completed"));
    // The audit, in commit order: never more than the cap started (preparing or running) at once.
    const started = new Set<string>();
    let most = 0;
    for (const e of await rows(h, "SELECT entity_id, to_status FROM events ORDER BY id")) {
      if (e.to_status === "preparing" || e.to_status === "running") started.add(e.entity_id);
      else started.delete(e.entity_id);
      most = Math.max(most, started.size);
    }
    expect(most).toBe(2);
    // Those that waited each had a place in line of their own.
    const seqs = await rows(h, "SELECT queue_seq FROM entities WHERE queue_seq IS NOT NULL");
    expect(seqs.length).toBeGreaterThan(2);
    expect(new Set(seqs.map((r) => r.queue_seq)).size).toBe(seqs.length);
  }, 120000);

  test("a startup parameter the pooler refuses (options in the URL) is an error naming the pooler and the fix, never 'check that the server is up', before any record", async () => {
    const h = home({ LI_STORE: `${pooled}?options=-c%20statement_timeout%3D0` });
    const before = await sql(direct, "SELECT count(*)::int AS n FROM entities");
    for (const args of [["job", "list"], ["agent", "--detach", "mock/echo", "x"]]) {
      const r = await li(["--machine", ...args], { env: h.env });
      expect(r.json?.error).toMatchObject({ kind: "unavailable", detail: { reason: "store_pooler_refused" } });
      expect(r.json.error.message).toMatch(/connection pooler that refused a startup parameter/);
      expect(r.json.error.message).toMatch(/ignore_startup_parameters/);
      expect(r.json.error.message).not.toMatch(/server is up/);
    }
    expect(await sql(direct, "SELECT count(*)::int AS n FROM entities")).toEqual(before);
  });

  test("an exhausted pool is an error naming the pool and what to raise, never 'check that the server is up'", async () => {
    // A pooler of its own that tells a waiting client within a second, its one connection held.
    const own = await startPgbouncer(workerCluster().port, { poolSize: 1, queryWaitTimeout: 1 });
    const { default: pg } = await import("pg");
    const holder = new pg.Client({ connectionString: own.url(direct) });
    holder.on("error", () => {});
    try {
      await holder.connect();
      await holder.query("BEGIN");
      await holder.query("SELECT 1");
      const r = await li(["--machine", "job", "list"], { env: home({ LI_STORE: own.url(direct) }).env });
      expect(r.json?.error).toMatchObject({ kind: "unavailable", detail: { reason: "store_pool_exhausted" } });
      expect(r.json.error.message).toMatch(/pool.*exhausted/);
      expect(r.json.error.message).toMatch(/default_pool_size/);
      expect(r.json.error.message).not.toMatch(/server is up/);
    } finally {
      await holder.end().catch(() => {});
      own.stop();
    }
  });

  /** li doctor's store_wakeups check, for a home's environment (doctor fails, exit 1, on other checks' account too: the check is what is read). */
  const wakeups = async (env: NodeJS.ProcessEnv) => {
    const r = await li(["--machine", "doctor"], { env });
    const checks = r.json?.ok ? r.json.data.checks : r.json?.error?.detail?.checks;
    return (checks ?? []).find((c: any) => c.check === "store_wakeups");
  };

  test("li wait with a 10 s poll interval returns within 2 s of the run's end when the listen URL is set; without it li doctor warns that waits poll, naming the setting", async () => {
    const h = home();
    expect(await wakeups(h.env)).toMatchObject({ ok: true, warning: true, detail: expect.stringMatching(/connection pooler.*poll/), fix: expect.stringMatching(/LI_STORE_LISTEN.*store_listen/) });
    h.env.LI_STORE_LISTEN = direct;
    expect(await wakeups(h.env)).toMatchObject({ ok: true, fix: null, detail: expect.stringMatching(/LISTEN on the listen URL/) });
    expect((await wakeups(h.env)).warning).toBeUndefined();
    const run = await liData(["agent", "--detach", "mock/sleep:1", "x"], { env: h.env });
    const w = await liData(["wait", run.id, "--poll-interval-seconds", "10", "--max-wait-seconds", "30"], { env: h.env });
    const returned = Date.now();
    expect(w).toMatchObject({ all_terminal: true, timed_out: false, poll_interval_seconds: 10 });
    const [{ ended_at }] = await rows(h, "SELECT ended_at FROM entities WHERE id = ?", [run.id]);
    // Its next poll would have come 10 s after its first look, some 9 s after the end.
    endedBefore((returned - Date.parse(ended_at)) / 1000, 2, "li wait's return after the run's end, woken through the listen URL");
  });

  test("no LISTEN stays on the pooled server connection after li's waits, follows and doctor: the next borrower of the one connection listens on nothing", async () => {
    const h = home();
    const run = await liData(["agent", "--detach", "mock/sleep:0.3", "x"], { env: h.env });
    await liData(["wait", run.id, "--poll-interval-seconds", "0.2", "--max-wait-seconds", "30"], { env: h.env });
    const followed = await liData(["agent", "--detach", "mock/sleep:0.3", "y"], { env: h.env });
    const f = await li(["job", "output", "--follow", followed.id], { env: h.env });
    expect([f.code, f.stdout]).toEqual([0, "y"]);
    await wakeups(h.env);
    // One server connection: whoever borrows it now sees what every li above left on it.
    expect(await sql(pooled, "SELECT pg_listening_channels() AS channel")).toEqual([]);
  });

  test("a listen URL that is not a PostgreSQL URL, or names the pooler itself, is refused before any record; one that reaches the pooler under another name fails li doctor", async () => {
    const h = home();
    const count = async () => (await sql(direct, "SELECT count(*)::int AS n FROM entities"))[0].n;
    const before = await count();
    for (const [listen, says] of [
      ["mysql://li@127.0.0.1/d", /LI_STORE_LISTEN: expected a PostgreSQL URL/],
      [pooled, /names the store's own address; it must be a direct connection to PostgreSQL/],
    ] as const) {
      const r = await li(["--machine", "agent", "--detach", "mock/echo", "x"], { env: { ...h.env, LI_STORE_LISTEN: listen } });
      expect(r.json?.error).toMatchObject({ kind: "invalid_input", message: expect.stringMatching(says), detail: { field: "LI_STORE_LISTEN" } });
    }
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `store_listen: ${pooled}
`);
    const r = await li(["--machine", "job", "list"], { env: h.env });
    expect(r.json?.error).toMatchObject({ kind: "invalid_input", message: expect.stringMatching(/store_listen: in settings.yaml .* names the store's own address/) });
    fs.rmSync(path.join(h.home, "settings.yaml"));
    expect(await count()).toBe(before);
    const elsewhere = pooled.replace("127.0.0.1", "localhost");
    expect(await wakeups({ ...h.env, LI_STORE_LISTEN: elsewhere })).toMatchObject({ ok: false, detail: expect.stringMatching(/reaches a connection pooler or proxy, not PostgreSQL itself/) });
    expect(await sql(pooled, "SELECT pg_listening_channels() AS channel")).toEqual([]);
  });

  test("store_pooled: true in settings.yaml is taken at its word: li doctor says waits poll and why, without asking the server", async () => {
    const h = home();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "store_pooled: true\n");
    expect(await wakeups(h.env)).toMatchObject({ ok: true, warning: true, detail: expect.stringMatching(/store_pooled: true/), fix: expect.stringMatching(/LI_STORE_LISTEN/) });
  });
});

test("the failures told apart by their words: a refused startup parameter, an exhausted pool (PgBouncer's, PostgreSQL's, Supavisor's and Neon's), and a server gone; a full pool passes like a restart, a refused parameter does not", async () => {
  const { pgFailure, isUnreachable } = await import("../src/lifecycle/db/pg-errors.js");
  const err = (code: string, message: string) => Object.assign(new Error(message), { code });
  const cases: [Error, string, boolean][] = [
    [err("08P01", "unsupported startup parameter: options"), "pooler_refused", false],
    [err("08P01", "query_wait_timeout"), "pool_exhausted", true],
    [err("08P01", "no more connections allowed (max_client_conn)"), "pool_exhausted", true],
    [err("53300", "sorry, too many clients already"), "pool_exhausted", true],
    [err("XX000", "Max client connections reached"), "pool_exhausted", true],
    [err("08006", "server closed the connection unexpectedly"), "unreachable", true],
    [err("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), "unreachable", true],
    [err("28P01", "password authentication failed"), "credentials", false],
  ];
  expect(cases.map(([e]) => [pgFailure(e), isUnreachable(e)])).toEqual(cases.map(([, f, passes]) => [f, passes]));
});
