/**
 * Issue 45, row 8: li's store is never reachable from inside a workspace sandbox. With a
 * PostgreSQL store on this host (trust auth, a Unix socket and a loopback port), an agent that
 * tries the socket with psql, and the port through the proxy even where sandbox.allow_hosts
 * names it, changes nothing in the store: judged by the store itself.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { output, rows, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { describePostgres, workerCluster } from "./helpers/postgres.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeStore = sandboxSuite("sandbox-store.test.ts", describePostgres);

describeStore("a sandboxed run and li's PostgreSQL store", () => {
  const homes = useHomes({ stopRuns: true });

  test("the store's socket is hidden and its port refused, allow_hosts or not: the agent's psql writes nothing", async () => {
    const base = homes();
    const h = { ...base, env: { ...base.env, LI_STORE: base.env.LI_STORE ?? workerCluster().createDatabase({ migrated: true }), LI_TEST_HOSTILE_MOCK: "1" } };
    const u = new URL(h.env.LI_STORE!);
    const port = Number(u.port);
    const db = u.pathname.slice(1);
    const [{ unix_socket_directories: dirs }] = await rows(h, "SHOW unix_socket_directories");
    const dir = String(dirs).split(",")[0].trim();
    expect(fs.existsSync(path.join(dir, `.s.PGSQL.${port}`))).toBe(true);
    // Reachable by the agent's user, as a socket in /tmp is (the data directory inside stays 0700).
    const mode = fs.statSync(dir).mode & 0o7777;
    fs.chmodSync(dir, 0o755);
    try {
    // A person allowed the store's host and port, as one might for an agent's own database.
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_hosts: ["127.0.0.1:${port}", "localhost:${port}"]\n`);
    const psql = (host: string, table: string) => `sh psql -X -h ${host} -p ${port} -U li -d ${db} -c "CREATE TABLE ${table} (x int)"`;
    const prompt = [psql(dir, "pwned_socket"), `connect 127.0.0.1 ${port}`, `connect localhost ${port}`].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env: h.env, cwd: os.tmpdir() });
    const done = await terminal(h.env, r.id, 60_000);
    const out = (await output(h.env, r.id)).output as string;
    expect(done.status).toBe("completed");
    expect(out).toMatch(/^sh: refused \(exit [1-9]/m);
    expect(out).toContain(`connect 127.0.0.1:${port}: refused (HTTP/1.1 403`);
    expect(out).toContain(`connect localhost:${port}: refused (HTTP/1.1 403`);
    expect(await rows(h, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'pwned%'")).toEqual([]);
    expect(done.sandbox.denials.hosts).toEqual(expect.arrayContaining([{ host: `127.0.0.1:${port}`, count: 1 }, { host: `localhost:${port}`, count: 1 }]));
    } finally {
      fs.chmodSync(dir, mode);
    }
  }, 120_000);
});
