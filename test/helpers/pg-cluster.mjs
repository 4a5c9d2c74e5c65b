// A throwaway PostgreSQL cluster (plain JS: jest's global set-up loads it untransformed).
// initdb into a temporary folder and pg_ctl on a free loopback port. PostgreSQL refuses to run
// as root, so as root the cluster belongs to `nobody`.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const PG_HINT = "PostgreSQL's binaries are missing: `apt-get install postgresql` (Debian), or set LI_TEST_PG_BIN to the folder holding initdb, pg_ctl, createdb and psql";

/** What the suites run from PostgreSQL's folder of binaries. */
const PG_TOOLS = ["initdb", "pg_ctl", "createdb", "psql"];
const holdsTools = (dir) => PG_TOOLS.every((t) => fs.existsSync(path.join(dir, t)));

/**
 * The folder of PostgreSQL's binaries, by the one rule jest.config.js, .ci/run and the suites
 * share: LI_TEST_PG_BIN, else Debian's newest /usr/lib/postgresql/N/bin, else the folder `initdb`
 * on PATH really lives in (a symlink to it, as some images put in /usr/local/bin, is followed).
 * Each must hold every tool the suites run (PG_TOOLS); undefined when none does.
 */
export function pgBinDir() {
  const given = process.env.LI_TEST_PG_BIN;
  if (given) return holdsTools(given) ? given : undefined;
  const debian = "/usr/lib/postgresql";
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).filter((v) => holdsTools(path.join(debian, v, "bin"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(debian, versions[0], "bin");
  }
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  if (!found) return undefined;
  const dir = path.dirname(fs.realpathSync(found));
  return holdsTools(dir) ? dir : undefined;
}

/**
 * Where a free port is looked for: below the kernel's ephemeral range (ip_local_port_range),
 * which bind(0) and every outgoing connection take their ports from. A port found by bind(0) and
 * closed could be handed to any process's connection before the server binds it, or while the
 * server is stopped (an outage, a restart), and a client retrying a closed port in that range can
 * be given the port itself and connect to itself. Null (bind(0) then) where the range leaves no room below it.
 */
function pickRange() {
  let low = 32768;
  try {
    low = Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || low;
  } catch {}
  const hi = Math.min(low, 32768);
  const lo = Math.max(10000, hi - 16000);
  return hi - lo >= 1000 ? [lo, hi] : null;
}

/** Node code that prints a free loopback port (tried at random in `range`, else bind(0)), for freePort and freePortSync alike. */
const PICK = (range) => `
const net = require("node:net");
const range = ${JSON.stringify(range)};
let tries = 0;
(function attempt() {
  const port = range && tries++ < 50 ? range[0] + Math.floor(Math.random() * (range[1] - range[0])) : 0;
  const s = net.createServer();
  s.once("error", () => (port === 0 ? process.exit(1) : attempt()));
  s.listen(port, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });
})();`;

/** A free loopback port, below the ephemeral range where there is one (pickRange). */
export function freePort() {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ["-e", PICK(pickRange())], { encoding: "utf8" }, (err, out) => (err ? reject(err) : resolve(Number(out)))),
  );
}

/** freePort, synchronously (tempHome, which may start a worker's cluster, is synchronous). */
export function freePortSync() {
  return Number(execFileSync(process.execPath, ["-e", PICK(pickRange())], { encoding: "utf8" }));
}

const asRoot = () => process.getuid?.() === 0;

/** The command running a PostgreSQL server binary, as `nobody` when we are root. */
function pgCommand(bin, args) {
  const file = path.join(pgBinDir(), bin);
  return asRoot() ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", file, ...args]] : [file, args];
}

function runPg(bin, args) {
  const [cmd, argv] = pgCommand(bin, args);
  return execFileSync(cmd, argv, { encoding: "utf8", cwd: os.tmpdir(), stdio: ["ignore", "pipe", "pipe"] });
}

/** runPg without blocking the event loop: the test's own clients see the server go and come back. */
function runPgAsync(bin, args) {
  const [cmd, argv] = pgCommand(bin, args);
  return new Promise((resolve, reject) => execFile(cmd, argv, { encoding: "utf8", cwd: os.tmpdir() }, (err, out) => (err ? reject(err) : resolve(out))));
}

let counter = 0;
let strategy;
/** Whether createdb takes --strategy (PostgreSQL 15 and later). */
const fileCopy = () => (strategy ??= Number(/(\d+)/.exec(execFileSync(path.join(pgBinDir(), "createdb"), ["--version"], { encoding: "utf8" }))?.[1]) >= 15);

/**
 * A new database in the cluster on `port`; its URL. Empty unless `template` names a database to
 * copy (test/helpers/pg-worker.mjs keeps one with li's schema). The name is unique across test
 * files sharing a worker process (each has its own counter) and across workers.
 */
export function createDatabase(port, opts = {}) {
  const name = `li_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 10)}`;
  // Copying the files costs the server about half what logging each page does (WAL_LOG, the
  // default since PostgreSQL 15) for databases this small; before 15 it was the only way.
  const copy = fileCopy() ? ["-S", "FILE_COPY"] : [];
  execFileSync(path.join(pgBinDir(), "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "li", ...copy, ...(opts.template ? ["-T", opts.template] : []), name]);
  return `postgres://li@127.0.0.1:${port}/${name}`;
}

/** initdb into a new temporary folder and start the server on `port`: where it is, {port, dir}. */
export function launchCluster(port) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-pg-"));
  if (asRoot()) fs.chownSync(dir, 65534, 65534);
  const data = path.join(dir, "data");
  runPg("initdb", ["-D", data, "-U", "li", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"]);
  const conf = [`listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${dir}'`, "fsync = off", "synchronous_commit = off", "full_page_writes = off", "max_connections = 300"];
  fs.appendFileSync(path.join(data, "postgresql.conf"), conf.join("\n") + "\n");
  // Another test run may have taken the port since it was found free: the server then cannot bind
  // it, and starts on another (a later `port =` line overrides the first).
  for (let attempt = 1; ; attempt++) {
    try {
      runPg("pg_ctl", ctlArgs(dir, ["start"]));
      return { port, dir };
    } catch (err) {
      const log = fs.existsSync(path.join(dir, "log")) ? fs.readFileSync(path.join(dir, "log"), "utf8") : "";
      if (attempt >= 5 || !/could not bind .*Address already in use/.test(log)) throw err;
      port = freePortSync();
      fs.appendFileSync(path.join(data, "postgresql.conf"), `port = ${port}\n`);
    }
  }
}

const ctlArgs = (dir, args) => ["-D", path.join(dir, "data"), "-l", path.join(dir, "log"), "-w", "-t", "60", ...args];

/** Stops the cluster in `dir` at once (as a crash would) and removes it. */
export function stopClusterAt(dir) {
  try {
    runPg("pg_ctl", ctlArgs(dir, ["-m", "immediate", "stop"]));
  } catch {}
  fs.rmSync(dir, { recursive: true, force: true });
}

/** The cluster launched at {port, dir}: its URLs, databases, restarts and stop. */
export function clusterAt({ port, dir }) {
  const ctl = (...args) => runPg("pg_ctl", ctlArgs(dir, args));
  const url = (db = "postgres") => `postgres://li@127.0.0.1:${port}/${db}`;
  return {
    port,
    dir,
    url,
    /** A fresh, empty database; its URL. (Only a worker's cluster keeps a migrated one to copy.) */
    createDatabase: (opts = {}) => {
      if (opts.migrated) throw new Error("a migrated database comes from a jest worker's cluster (workerCluster()), which keeps the template");
      return createDatabase(port);
    },
    /** `pg_ctl restart`: immediate cuts every connection, as a crash does. */
    restart(mode = "immediate") {
      ctl("-m", mode, "restart");
    },
    /** restart, resolving once the server accepts connections again. */
    async restartAsync(mode = "immediate") {
      await runPgAsync("pg_ctl", ctlArgs(dir, ["-m", mode, "restart"]));
    },
    /** A crash and `ms` of the server being down (connections refused) before it starts again; `whileDown` runs once it is down. */
    async outage(ms, whileDown) {
      await runPgAsync("pg_ctl", ctlArgs(dir, ["-m", "immediate", "stop"]));
      await whileDown?.();
      await new Promise((r) => setTimeout(r, ms));
      await runPgAsync("pg_ctl", ctlArgs(dir, ["start"]));
    },
    stop: () => stopClusterAt(dir),
  };
}

/**
 * A new cluster of the caller's own on 127.0.0.1; stop it when done. Only a suite that restarts,
 * stops or reconfigures its server needs one: any other uses its jest worker's (pg-worker.mjs).
 */
export async function startCluster() {
  return clusterAt(launchCluster(await freePort()));
}
