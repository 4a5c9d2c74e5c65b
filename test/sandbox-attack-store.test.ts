/**
 * Played as a determined agent under --sandbox workspace beside li's PostgreSQL store on this host:
 * the proxy refuses the store's port on this host's names, but a name is not where it leads. A
 * person who allowed a host for an agent's own database by a name that resolves to this host (an
 * alias in /etc/hosts, or another spelling of loopback: a decimal or IPv4-mapped address) must not
 * have opened li's store: the proxy judges the addresses a name resolves to. Judged by the
 * proxy's answer (the connect the agent made) and its record.
 */
import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import { output, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { describePostgres, workerCluster } from "./helpers/postgres.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeStore = sandboxSuite("sandbox-attack-store.test.ts", describePostgres);

describeStore("li's store by another name of this host", () => {
  const homes = useHomes({ stopRuns: true });

  test("allow_hosts naming loopback by a decimal or an IPv4-mapped spelling: the store's port is still refused, and recorded", async () => {
    const base = homes();
    const h = { ...base, env: { ...base.env, LI_STORE: base.env.LI_STORE ?? workerCluster().createDatabase({ migrated: true }), LI_TEST_HOSTILE_MOCK: "1" } };
    const port = Number(new URL(h.env.LI_STORE!).port);
    const names = ["2130706433", "[::ffff:127.0.0.1]", "0"];
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `sandbox:\n  allow_hosts: [${names.map((n) => JSON.stringify(`${n}:${port}`)).join(", ")}]\n`);
    // A CONNECT, then the PostgreSQL startup the agent would send through it: judged by the proxy's answer.
    const prompt = names.map((n) => `connect ${n} ${port}`).join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env: h.env, cwd: os.tmpdir() });
    const done = await terminal(h.env, r.id, 60_000);
    expect(done.status).toBe("completed");
    const out = (await output(h.env, r.id)).output as string;
    for (const n of names) expect(out).toContain(`connect ${n}:${port}: refused (HTTP/1.1 403`);
    expect(done.sandbox.denials.hosts.map((d: any) => d.host)).toEqual(expect.arrayContaining(names.map((n) => `${n}:${port}`)));
  }, 120_000);
});
