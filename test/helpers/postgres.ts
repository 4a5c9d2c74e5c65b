import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/*
 * A throwaway PostgreSQL cluster for tests: initdb into a temporary folder and pg_ctl on a free
 * loopback port. PostgreSQL refuses to run as root, so as root the cluster belongs to `nobody`.
 * Without the binaries a suite skips (saying how to get them) unless LI_TEST_REQUIRE_POSTGRES is
 * set, as CI sets it: there their absence is a failure.
 */

export const PG_HINT = "PostgreSQL's binaries are missing: `apt-get install postgresql` (Debian), or set LI_TEST_PG_BIN to the folder holding initdb and pg_ctl";

/** The folder holding initdb and pg_ctl: LI_TEST_PG_BIN, else Debian's newest, else PATH. */
export function pgBinDir(): string | undefined {
  const given = process.env.LI_TEST_PG_BIN;
  if (given) return fs.existsSync(path.join(given, "initdb")) ? given : undefined;
  const debian = "/usr/lib/postgresql";
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).filter((v) => fs.existsSync(path.join(debian, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(debian, versions[0], "bin");
  }
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  return found ? path.dirname(found) : undefined;
}

/** `describe` for suites that need PostgreSQL: skipped with a hint when it is missing, a failure in CI. */
export function describePostgres(name: string, fn: () => void): void {
  if (pgBinDir()) return describe(name, fn);
  if (process.env.LI_TEST_REQUIRE_POSTGRES) {
    describe(name, () => test("PostgreSQL is installed", () => { throw new Error(PG_HINT); }));
    return;
  }
  console.warn(`skipping "${name}": ${PG_HINT}`);
  describe.skip(name, fn);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface PgCluster {
  port: number;
  dir: string;
  /** A connection URL for `db` as the cluster's superuser (no password: the cluster trusts loopback). */
  url(db?: string): string;
  /** A fresh, empty database; its URL. */
  createDatabase(): Promise<string>;
  /** `pg_ctl restart -m immediate`: every connection is cut, as by a crash. */
  restart(mode?: "immediate" | "fast"): void;
  stop(): void;
}

const asRoot = () => process.getuid?.() === 0;

/** Runs a PostgreSQL binary, as `nobody` when we are root. */
function runPg(bin: string, args: string[], opts: { cwd?: string } = {}): string {
  const file = path.join(pgBinDir()!, bin);
  const [cmd, argv] = asRoot() ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", file, ...args]] : [file, args];
  return execFileSync(cmd, argv, { encoding: "utf8", cwd: opts.cwd ?? os.tmpdir(), stdio: ["ignore", "pipe", "pipe"] });
}

let counter = 0;

/** A new cluster, listening on 127.0.0.1 only; stop it in afterAll. */
export async function startCluster(): Promise<PgCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-pg-"));
  if (asRoot()) fs.chownSync(dir, 65534, 65534);
  const data = path.join(dir, "data");
  runPg("initdb", ["-D", data, "-U", "li", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"]);
  const port = await freePort();
  const conf = [`listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${dir}'`, "fsync = off", "synchronous_commit = off", "full_page_writes = off", "max_connections = 200", "log_min_messages = fatal"];
  fs.appendFileSync(path.join(data, "postgresql.conf"), conf.join("\n") + "\n");
  const start = () => runPg("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-t", "60", "start"]);
  start();
  const url = (db = "postgres") => `postgres://li@127.0.0.1:${port}/${db}`;
  return {
    port,
    dir,
    url,
    async createDatabase() {
      const name = `li_${process.pid}_${++counter}_${Date.now().toString(36)}`;
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    restart(mode = "immediate") {
      runPg("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-t", "60", "-m", mode, "restart"]);
    },
    stop() {
      try {
        runPg("pg_ctl", ["-D", data, "-w", "-t", "30", "-m", "immediate", "stop"]);
      } catch {}
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
