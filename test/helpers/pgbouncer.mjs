// A throwaway PgBouncer in front of a test cluster (plain JS, beside pg-cluster.mjs): Debian's
// pgbouncer in pool_mode = transaction, as hosted PostgreSQL is usually reached (issue 49), with
// its default ignore_startup_parameters (none), so a startup parameter li sent would be refused.
// PgBouncer refuses to run as root, so as root it runs as `nobody`, as the cluster does.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./pg-cluster.mjs";

export const PGBOUNCER_HINT = "PgBouncer is missing: `apt-get install pgbouncer` (Debian), or set LI_TEST_PGBOUNCER to its binary";

/** The pgbouncer binary: LI_TEST_PGBOUNCER, else Debian's, else the one on PATH; undefined when none. */
export function pgbouncerBin() {
  const given = process.env.LI_TEST_PGBOUNCER;
  if (given) return fs.existsSync(given) ? given : undefined;
  if (fs.existsSync("/usr/sbin/pgbouncer")) return "/usr/sbin/pgbouncer";
  const found = spawnSync("sh", ["-c", "command -v pgbouncer"], { encoding: "utf8" }).stdout.trim();
  return found || undefined;
}

const asRoot = () => process.getuid?.() === 0;

/** Resolves once something accepts connections on 127.0.0.1:`port`, or rejects after `ms`. */
async function untilListening(port, ms, log) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}: ${fs.existsSync(log) ? fs.readFileSync(log, "utf8").slice(-2000) : "(no log)"}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Writes a PgBouncer's configuration for the server on `serverPort` and starts it (daemonized) on
 * `port`; {port, dir, log, pidfile}. It listens a moment later: wait for it before use.
 */
export function launchPgbouncer(serverPort, port, opts = {}) {
  const bin = pgbouncerBin();
  if (!bin) throw new Error(PGBOUNCER_HINT);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-pgbouncer-"));
  const conf = path.join(dir, "pgbouncer.ini");
  const log = path.join(dir, "log");
  const pidfile = path.join(dir, "pid");
  fs.writeFileSync(path.join(dir, "users.txt"), `"li" ""\n`);
  fs.writeFileSync(
    conf,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${serverPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${opts.poolSize ?? 5}`,
      "max_client_conn = 1000",
      // A client waiting for a server connection longer than this is told so (an exhausted pool).
      `query_wait_timeout = ${opts.queryWaitTimeout ?? 120}`,
      `logfile = ${log}`,
      `pidfile = ${pidfile}`,
      "",
    ].join("\n"),
  );
  if (asRoot()) for (const f of [dir, ...fs.readdirSync(dir).map((n) => path.join(dir, n))]) fs.chownSync(f, 65534, 65534);
  const [cmd, argv] = asRoot() ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", bin, "-d", conf]] : [bin, ["-d", conf]];
  execFileSync(cmd, argv, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  return { port, dir, log, pidfile };
}

/** Stops the PgBouncer launched at `at` ({dir, pidfile}) and removes its folder. */
export function stopPgbouncerAt(at) {
  try {
    const pid = Number(fs.readFileSync(at.pidfile, "utf8").trim());
    if (pid > 0) process.kill(pid, "SIGTERM");
  } catch {}
  fs.rmSync(at.dir, { recursive: true, force: true });
}

/** The pooler's URL for `direct` (a URL of the cluster on `serverPort`), or for database `db`. */
export const pooledUrl = (serverPort, port, direct) => (direct.includes("://") ? direct.replace(`:${serverPort}/`, `:${port}/`) : `postgres://li@127.0.0.1:${port}/${direct}`);

/**
 * A PgBouncer on a free loopback port in front of the server on `serverPort`, every database
 * passed through, `poolSize` server connections per database and user. Returns
 * { port, url(db), stop() }; `url` swaps a direct URL's port for the pooler's.
 */
export async function startPgbouncer(serverPort, opts = {}) {
  const at = launchPgbouncer(serverPort, await freePort(), opts);
  await untilListening(at.port, 10_000, at.log);
  return { ...at, url: (direct) => pooledUrl(serverPort, at.port, direct), stop: () => stopPgbouncerAt(at) };
}
