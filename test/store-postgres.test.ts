/**
 * Issue 19's failure answers for a PostgreSQL store (LI_STORE), black-box: a server that is down,
 * refuses li's password, lacks the database, or holds a schema li does not speak is a clear
 * `unavailable` naming the URL without its password and what to do, with nothing half-written;
 * a store URL that is not PostgreSQL's is `invalid_input`; a project settings file never names
 * the store. A cluster of its own: it changes roles and pg_hba.conf.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PG_BASE_VERSION } from "../src/lifecycle/db/pg-schema.js";
import { SCHEMA_VERSION } from "../src/lifecycle/schema.js";
import { connectMcp } from "./helpers/mcp.js";
import { type Home, li, liData, type LiRun, tempHome } from "./helpers/li.js";
import { describePostgres, freePort, pgBinDir, startCluster, type PgCluster } from "./helpers/postgres.js";
import { terminal } from "./helpers/fixtures.js";

const PASSWORD = "S3cret-pw_only-here";

describePostgres("a PostgreSQL store li cannot use", () => {
  let cluster: PgCluster;
  const homes: Home[] = [];
  const psql = (db: string, ...sql: string[]) =>
    execFileSync(path.join(pgBinDir()!, "psql"), ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", "li", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, ...sql.flatMap((s) => ["-c", s])], { encoding: "utf8" }).trim();

  beforeAll(async () => {
    cluster = await startCluster();
    // A role that must give its password: the cluster trusts loopback for everyone else.
    psql("postgres", `CREATE ROLE keeper LOGIN PASSWORD '${PASSWORD}'`, "CREATE DATABASE kept OWNER keeper");
    const hba = path.join(cluster.dir, "data", "pg_hba.conf");
    fs.writeFileSync(hba, `host all keeper 127.0.0.1/32 scram-sha-256\n${fs.readFileSync(hba, "utf8")}`);
    psql("postgres", "SELECT pg_reload_conf()");
  });
  afterAll(() => {
    for (const h of homes) h.cleanup();
    cluster?.stop();
  });

  /** A fresh home whose store is `url`. */
  function home(url: string): Home {
    const h = tempHome();
    h.env.LI_STORE = url;
    homes.push(h);
    return h;
  }

  const withPassword = (url: string, pw = PASSWORD) => {
    const u = new URL(url);
    u.password = pw;
    return u.toString();
  };

  /** Exit non-zero, `unavailable`, the URL shown with *** and never the password, a remedy; nothing under LI_HOME. */
  function expectUnavailable(r: LiRun, h: Home, shown: string, todo: RegExp): any {
    expect(r.code).not.toBe(0);
    expect(r.json?.ok).toBe(false);
    const err = r.json.error;
    expect(err.kind).toBe("unavailable");
    expect(err.message).toContain(shown);
    expect(err.message).toMatch(todo);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(err.detail.store).toBe(shown);
    expect(fs.existsSync(path.join(h.home, "runs")) ? fs.readdirSync(path.join(h.home, "runs")) : []).toEqual([]);
    expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(false);
    return err;
  }

  /** Both a read and a submission, each refused the same way. */
  async function bothRefused(h: Home, shown: string, todo: RegExp): Promise<any[]> {
    const list = await li(["--machine", "job", "list"], { env: h.env });
    const submit = await li(["--machine", "agent", "--detach", "mock/echo", "hi"], { env: h.env });
    return [expectUnavailable(list, h, shown, todo), expectUnavailable(submit, h, shown, todo)];
  }

  test("a closed port: unreachable, naming the URL with *** for its password and what to check", async () => {
    const port = await freePort();
    const h = home(`postgres://keeper:${PASSWORD}@127.0.0.1:${port}/kept`);
    const errs = await bothRefused(h, `postgres://keeper:***@127.0.0.1:${port}/kept`, /check that the server is up/);
    for (const e of errs) expect(e.detail).toMatchObject({ reason: "store_unreachable", code: "ECONNREFUSED" });
  });

  test("a wrong password, and a role that does not exist: credentials refused, and what to check", async () => {
    const wrong = home(withPassword(cluster.url("kept").replace("li@", "keeper@"), "not-" + PASSWORD));
    for (const e of await bothRefused(wrong, cluster.url("kept").replace("li@", "keeper:***@"), /check the user and password/)) expect(e.detail).toMatchObject({ reason: "store_credentials", code: "28P01" });
    // The password itself in the URL the user gave is never echoed either.
    const ghost = home(`postgres://ghost:${PASSWORD}@127.0.0.1:${cluster.port}/kept`);
    for (const e of await bothRefused(ghost, `postgres://ghost:***@127.0.0.1:${cluster.port}/kept`, /check the user and password/)) expect(e.detail.reason).toBe("store_credentials");
  });

  test("a password with an unencoded @, # or /: everything between :// and the last @ is redacted in every answer, and the remedy says to percent-encode", async () => {
    const odd = "p@ss#w/rd-" + PASSWORD;
    const pieces = ["ss#w", "w/rd", PASSWORD];
    const shown = `postgres://keeper:***@127.0.0.1:${cluster.port}/kept`;
    const clean = (r: LiRun) => {
      for (const p of pieces) expect(r.stdout + r.stderr).not.toContain(p);
    };
    // As written, such a URL would be read with another host: refused before any connection.
    const h = home(`postgres://keeper:${odd}@127.0.0.1:${cluster.port}/kept`);
    for (const args of [["--machine", "job", "list"], ["--machine", "agent", "--detach", "mock/echo", "hi"]]) {
      const r = await li(args, { env: h.env });
      expect(r.code).not.toBe(0);
      clean(r);
      expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "LI_STORE", url: shown } });
      expect(r.json.error.message).toContain(shown);
      expect(r.json.error.message).toMatch(/percent-encode special characters in the password \(@ → %40, # → %23, \/ → %2F/);
    }
    const doctor = await li(["doctor"], { env: h.env });
    expect(doctor.code).toBe(1);
    clean(doctor);
    expect(doctor.stdout).toContain(shown);
    expect(doctor.stdout).toMatch(/fix: fix LI_STORE, or store: in settings.yaml \(percent-encode special characters in the password\)/);
    // The same in settings.yaml, named by its file.
    const fromFile = home("");
    delete fromFile.env.LI_STORE;
    fs.writeFileSync(path.join(fromFile.home, "settings.yaml"), `store: postgres://keeper:${odd}@127.0.0.1:${cluster.port}/kept\n`, { mode: 0o600 });
    const viaFile = await li(["--machine", "job", "list"], { env: fromFile.env });
    clean(viaFile);
    expect(viaFile.json.error.message).toContain(shown);
    // An unencoded @ alone is read as meant: the refusal names the URL the same way and says to percent-encode.
    const at = home(`postgres://keeper:p@ss-${PASSWORD}@127.0.0.1:${cluster.port}/kept`);
    const errs = await bothRefused(at, shown, /check the user and password .*percent-encoded \(@ → %40/);
    for (const e of errs) expect(e.detail).toMatchObject({ reason: "store_credentials", remedy: expect.stringMatching(/percent-encoded/) });
    const atDoctor = await li(["doctor"], { env: at.env });
    clean(atDoctor);
    expect(atDoctor.stdout).toMatch(/fix: check the user and password/);
    expect(atDoctor.stdout).not.toContain("li state migrate");
  });

  test("a database that does not exist: named, with how to create one", async () => {
    const h = home(withPassword(cluster.url("nowhere").replace("li@", "keeper@")));
    for (const e of await bothRefused(h, cluster.url("nowhere").replace("li@", "keeper:***@"), /create it \(createdb\)/)) expect(e.detail).toMatchObject({ reason: "store_no_database", code: "3D000" });
  });

  test("the right password works, and a store at a newer schema is refused with nothing written", async () => {
    const url = withPassword(cluster.url("kept").replace("li@", "keeper@"));
    const shown = cluster.url("kept").replace("li@", "keeper:***@");
    const ok = home(url);
    const id = (await liData(["agent", "--detach", "mock/echo", "hi"], { env: ok.env })).id;
    expect((await terminal(ok.env, id)).status).toBe("completed");
    psql("kept", "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    const before = psql("kept", "SELECT count(*) FROM entities", "SELECT count(*) FROM events");
    const h = home(url);
    for (const e of await bothRefused(h, shown, /upgrade li/)) expect(e.detail).toMatchObject({ schema_version: 99, supported: SCHEMA_VERSION });
    // li state migrate does not downgrade: the same refusal.
    expectUnavailable(await li(["--machine", "state", "migrate"], { env: h.env }), h, shown, /upgrade li/);
    expect(psql("kept", "SELECT count(*) FROM entities", "SELECT count(*) FROM events")).toBe(before);
    expect(psql("kept", "SELECT value FROM meta WHERE key = 'schema_version'")).toBe("99");
  });

  test("a schema older than any li's PostgreSQL store (a store at the base version is migrated instead: host.test): refused, never advised to a migration that does not exist; li state migrate stays human-only", async () => {
    const url = cluster.createDatabase();
    const h = home(url);
    expect((await liData(["job", "list"], { env: h.env })).jobs).toEqual([]);
    await liData(["agent", "--detach", "mock/echo", "hi"], { env: h.env });
    psql(new URL(url).pathname.slice(1), `UPDATE meta SET value = '${PG_BASE_VERSION - 1}' WHERE key = 'schema_version'`);
    const errs = await bothRefused(home(url), url, /give li a database of its own/);
    for (const e of errs) expect(e.detail).toMatchObject({ reason: "schema_unknown", schema_version: PG_BASE_VERSION - 1 });
    for (const e of errs) expect(e.message).not.toContain("li state migrate");
    // The human command says the same, and changes nothing.
    const m = await li(["--machine", "state", "migrate"], { env: h.env });
    expect(m.json?.error).toMatchObject({ kind: "unavailable", detail: { reason: "schema_unknown" } });
    // MCP has no such verb: an agent cannot rewrite the store.
    const mcp = await connectMcp(h.env);
    try {
      const r = await mcp.op("state.migrate", {});
      expect(r.ok).toBe(false);
    } finally {
      await mcp.close();
    }
    expect(psql(new URL(url).pathname.slice(1), "SELECT value FROM meta WHERE key = 'schema_version'")).toBe(String(PG_BASE_VERSION - 1));
  });

  test("a read before the first write says the PostgreSQL store has no li schema yet, naming the store (without its password), not LI_HOME", async () => {
    const url = withPassword(cluster.url("kept").replace("li@", "keeper@"));
    psql("postgres", "CREATE DATABASE untouched OWNER keeper");
    const h = home(url.replace("/kept", "/untouched"));
    const r = await li(["job", "list"], { env: h.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`li: nothing yet: the PostgreSQL store at postgres://keeper:***@127.0.0.1:${cluster.port}/untouched has no li schema yet (the first run, or li host run, creates it)\n`);
    expect(r.stderr).not.toContain(h.home);
  });

  test("li state migrate on a current PostgreSQL store: nothing to apply", async () => {
    const h = home(cluster.createDatabase());
    await liData(["job", "list"], { env: h.env });
    await liData(["agent", "--detach", "mock/echo", "hi"], { env: h.env });
    expect(await liData(["state", "migrate"], { env: h.env })).toEqual({ from_version: SCHEMA_VERSION, to_version: SCHEMA_VERSION, applied: [] });
  });

  test("a read leaves an empty database empty; li state migrate creates li's schema, its tables owned by the role it logs in as", async () => {
    psql("postgres", "CREATE DATABASE owned OWNER keeper");
    const h = home(withPassword(cluster.url("owned").replace("postgres://li@", "postgres://keeper@")));
    const tables = () => psql("owned", "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = current_schema()");
    expect(await liData(["job", "list"], { env: h.env })).toMatchObject({ jobs: [] });
    expect(await liData(["host", "list"], { env: h.env })).toMatchObject({ hosts: [] });
    expect(tables()).toBe("");
    expect(await liData(["state", "migrate"], { env: h.env })).toEqual({ from_version: 0, to_version: SCHEMA_VERSION, applied: [] });
    expect(tables()).toBe("keeper");
    const again = await li(["state", "migrate"], { env: h.env });
    expect(again.stdout).toContain(`is already at v${SCHEMA_VERSION}`);
    expect(again.stdout + again.stderr).not.toContain(PASSWORD);
  });

  test("LI_STORE that is not a PostgreSQL URL: invalid_input, its password not echoed", async () => {
    for (const url of [`mysql://root:${PASSWORD}@127.0.0.1/li`, "garbage", "sqlite:///tmp/x.db"]) {
      const h = home(url);
      for (const args of [["job", "list"], ["agent", "--detach", "mock/echo", "hi"]]) {
        const r = await li(["--machine", ...args], { env: h.env });
        expect([url, r.code, r.json?.error?.kind]).toEqual([url, 2, "invalid_input"]);
        expect(r.json.error.detail.field).toBe("LI_STORE");
        expect(r.stdout + r.stderr).not.toContain(PASSWORD);
        expect(fs.existsSync(path.join(h.home, "runs"))).toBe(false);
      }
    }
  });

  test("store: in a project's .li/settings.yaml is refused; the run stays in the local store", async () => {
    const url = cluster.createDatabase();
    const h = tempHome();
    homes.push(h);
    const project = path.join(h.home, "project");
    fs.mkdirSync(path.join(project, ".li"), { recursive: true });
    const file = path.join(project, ".li", "settings.yaml");
    fs.writeFileSync(file, `store: ${url}\n`);
    const trust = await li(["--machine", "hooks", "trust", file], { env: h.env, cwd: project });
    expect(trust.json?.error).toMatchObject({ kind: "invalid_input", detail: { key: "store" } });
    expect(trust.json.error.message).toContain("only the user settings file");
    const id = (await liData(["agent", "--detach", "mock/echo", "hi"], { env: h.env, cwd: project })).id;
    expect((await terminal(h.env, id)).status).toBe("completed");
    expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(true);
    expect(psql(new URL(url).pathname.slice(1), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).toBe("0");
  });
});
