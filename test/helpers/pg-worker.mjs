// One PostgreSQL cluster per jest worker (issue 40), plain JS: jest's global set-up and teardown
// load it untransformed. Starting a cluster (initdb, then the server) costs seconds of CPU, so a
// worker starts one the first time a suite of it needs one, and every later suite of that worker
// takes databases in it. Suites in one worker run one after another, so each still has its
// databases to itself. The cluster outlives the test file that started it (jest gives each file
// fresh modules), so where it is lives in a file of the run's folder, LI_TEST_PG_RUN_DIR, made by
// global set-up; global teardown stops every cluster found there.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { clusterAt, createDatabase, freePortSync, launchCluster, PG_HINT, pgBinDir, stopClusterAt } from "./pg-cluster.mjs";
import { launchPgbouncer, PGBOUNCER_HINT, pgbouncerBin, pooledUrl, stopPgbouncerAt } from "./pgbouncer.mjs";

const LI_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "li.js");
/** The database in each worker's cluster that li has migrated: test homes' stores are copies of it. */
export const TEMPLATE = "li_template";
const RUN_PREFIX = "li-pg-run-";

const running = (at) => fs.existsSync(path.join(at.dir, "data", "postmaster.pid"));

/**
 * This jest worker's cluster, started on first use: {port, dir, url, createDatabase, ...} as
 * startCluster gives, with `createDatabase({ migrated: true })` copying a database li has already
 * migrated. Stopping or restarting it is refused: the next suite of the worker needs it as it was.
 */
export function workerCluster() {
  const run = process.env.LI_TEST_PG_RUN_DIR;
  if (!run) throw new Error("LI_TEST_PG_RUN_DIR is not set: run the suites through jest, whose global set-up (test/helpers/pg-global.mjs) makes it");
  if (!pgBinDir()) throw new Error(PG_HINT);
  const file = path.join(run, `worker-${process.env.JEST_WORKER_ID ?? "1"}.json`);
  let at = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined;
  if (!at || !running(at)) {
    at = launchCluster(freePortSync());
    // Written before the template is made, so teardown stops the cluster even if that fails.
    fs.writeFileSync(file, JSON.stringify(at));
    migrateTemplate(at.port);
  }
  const cluster = clusterAt(at);
  const refuse = (what) => () => {
    throw new Error(`${what}: this cluster is shared by every suite of this jest worker; a suite that needs an outage or a restart starts its own (startCluster(), or useSharedStore(names, { cluster: "private" }))`);
  };
  return {
    ...cluster,
    createDatabase: (opts = {}) => createDatabase(at.port, opts.migrated ? { template: TEMPLATE } : {}),
    restart: refuse("restart"),
    restartAsync: refuse("restartAsync"),
    outage: refuse("outage"),
    stop: refuse("stop"),
  };
}

/**
 * This jest worker's PgBouncer (transaction mode) in front of its cluster, started on first use
 * like the cluster, stopped by global teardown: {port, url(direct)}. The postgres project reaches
 * its test homes' stores through it (tempHome), as a team reaches hosted PostgreSQL (issue 49).
 */
export function workerPooler() {
  const cluster = workerCluster();
  if (!pgbouncerBin()) throw new Error(PGBOUNCER_HINT);
  const file = path.join(process.env.LI_TEST_PG_RUN_DIR, `pooler-${process.env.JEST_WORKER_ID ?? "1"}.json`);
  let at = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined;
  if (!at || at.serverPort !== cluster.port || !fs.existsSync(at.pidfile)) {
    at = { ...launchPgbouncer(cluster.port, freePortSync(), { poolSize: 5 }), serverPort: cluster.port };
    fs.writeFileSync(file, JSON.stringify(at));
    // It listens a moment after it daemonizes: wait here, synchronously as tempHome is.
    const script = `const net = require("node:net"); const end = Date.now() + 10000; (function look() { const s = net.connect(${at.port}, "127.0.0.1"); s.once("connect", () => { s.destroy(); process.exit(0); }); s.once("error", () => (Date.now() > end ? process.exit(1) : setTimeout(look, 50))); })();`;
    execFileSync(process.execPath, ["-e", script]);
  }
  return { port: at.port, url: (direct) => pooledUrl(cluster.port, at.port, direct) };
}

/** Makes TEMPLATE and has li create its schema there (`li state migrate`), as a first write would. */
function migrateTemplate(port) {
  execFileSync(path.join(pgBinDir(), "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "li", TEMPLATE]);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-template-"));
  try {
    const env = { ...process.env, LI_HOME: home, LI_STORE: `postgres://li@127.0.0.1:${port}/${TEMPLATE}`, NODE_OPTIONS: "" };
    execFileSync(process.execPath, [LI_BIN, "--machine", "state", "migrate"], { env, stdio: ["ignore", "pipe", "pipe"] });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Global set-up: the run's folder (its owner recorded), after stopping what dead runs left. */
export function beginRun() {
  sweepDeadRuns();
  const run = fs.mkdtempSync(path.join(os.tmpdir(), RUN_PREFIX));
  fs.writeFileSync(path.join(run, "owner.json"), JSON.stringify({ pid: process.pid, starttime: starttime(process.pid), pidns: pidNamespace() }));
  process.env.LI_TEST_PG_RUN_DIR = run;
}

/** Global teardown: stops every worker's cluster and removes the run's folder. */
export function endRun(run = process.env.LI_TEST_PG_RUN_DIR) {
  if (!run || !fs.existsSync(run)) return;
  for (const name of fs.readdirSync(run)) {
    if (/^pooler-.*\.json$/.test(name)) {
      try {
        stopPgbouncerAt(JSON.parse(fs.readFileSync(path.join(run, name), "utf8")));
      } catch {}
      continue;
    }
    if (!/^worker-.*\.json$/.test(name)) continue;
    try {
      stopClusterAt(JSON.parse(fs.readFileSync(path.join(run, name), "utf8")).dir);
    } catch {}
  }
  fs.rmSync(run, { recursive: true, force: true });
}

/**
 * A run killed before its teardown leaves its clusters running: the next run stops them. Only a
 * run whose owner is in this process's PID namespace can be judged: /tmp is shared with jest runs
 * in other namespaces (`unshare --pid --mount-proc`, as a CPU count of a whole run uses), whose
 * pids mean other processes here or none. Judged by pid alone, such a run's clusters were stopped
 * under its running suites, and it stopped ours (a store gone mid-test, its run folder missing).
 */
function sweepDeadRuns() {
  const ours = pidNamespace();
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (!name.startsWith(RUN_PREFIX)) continue;
    const run = path.join(os.tmpdir(), name);
    let owner;
    try {
      owner = JSON.parse(fs.readFileSync(path.join(run, "owner.json"), "utf8"));
    } catch {
      continue;
    }
    if (!ours || owner.pidns !== ours) continue;
    if (starttime(owner.pid) !== owner.starttime) endRun(run);
  }
}

/** This process's PID namespace (`pid:[inode]`), or null where /proc does not say. */
function pidNamespace() {
  try {
    return fs.readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

/** A process's start time (clock ticks since boot), or null when it is gone: with its pid, it names one process. */
function starttime(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[19]);
  } catch {
    return null;
  }
}
