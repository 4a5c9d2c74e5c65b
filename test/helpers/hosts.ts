/**
 * Scaffolding for the multi-host suites (issue 19): several "hosts" on one store, each a LI_HOME
 * with a LI_HOST of its own on this machine, and their `li host run` daemons.
 *
 * useSharedStore gives the describe block it is called in databases in its jest worker's
 * PostgreSQL cluster (or a cluster of its own, to stop or restart) and cleans up after it;
 * startDaemon spawns a daemon and keeps it in a registry that useSharedStore's afterAll (or
 * useHomes, given startedDaemons as its procs) SIGKILLs if a test left it running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { killLeftovers, READY_BYTES, untilAgentReady, untilStatus } from "./fixtures.js";
import { type Home, LI_BIN, liData, ROOT, tempHome } from "./li.js";
import { startCluster, workerCluster, type PgCluster } from "./postgres.js";

/** Every daemon startDaemon spawned in this test file. */
export const startedDaemons: ChildProcess[] = [];

/** SIGKILLs every daemon startDaemon spawned that has not exited. */
export function killDaemons(): void {
  for (const d of startedDaemons) if (d.exitCode === null && d.signalCode === null) d.kill("SIGKILL");
}

export interface Daemon {
  proc: ChildProcess;
  pid: number;
  /** Its stdout and stderr so far, interleaved as they came. */
  log(): string;
  stdout(): string;
  stderr(): string;
  /** Its stdout parsed as one JSON value (the --machine envelope once it has exited), else undefined. */
  json(): any;
  /** Resolves with its exit code (null when a signal ended it) once it has exited and its output is read. */
  exited: Promise<number | null>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

export interface DaemonOptions {
  /** Arguments after the beat options, e.g. ["--max-parallel", "4"]. */
  args?: string[];
  /** Set over the home's environment. */
  env?: NodeJS.ProcessEnv;
  /** `li --machine host run`. */
  machine?: boolean;
  /** --poll-seconds; 0.2 unless given. */
  pollSeconds?: number;
  /** --lease-seconds, when given. */
  leaseSeconds?: number;
}

const isHome = (x: Home | NodeJS.ProcessEnv): x is Home => typeof (x as Home).cleanup === "function" && typeof (x as Home).env === "object";

/** `node bin/li.js [--machine] host run --poll-seconds X [--lease-seconds Y] …` for `target`'s host. */
export function startDaemon(target: Home | NodeJS.ProcessEnv, opts: DaemonOptions = {}): Daemon {
  const base = isHome(target) ? target.env : target;
  const argv = [LI_BIN, ...(opts.machine ? ["--machine"] : []), "host", "run", "--poll-seconds", String(opts.pollSeconds ?? 0.2)];
  if (opts.leaseSeconds !== undefined) argv.push("--lease-seconds", String(opts.leaseSeconds));
  argv.push(...(opts.args ?? []));
  const proc = spawn(process.execPath, argv, { env: { ...base, ...opts.env }, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  startedDaemons.push(proc);
  let all = "";
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => ((out += d), (all += d)));
  proc.stderr!.on("data", (d) => ((err += d), (all += d)));
  const exited = new Promise<number | null>((resolve) => proc.on("close", (code) => resolve(code)));
  return {
    proc,
    pid: proc.pid!,
    log: () => all,
    stdout: () => out,
    stderr: () => err,
    json: () => {
      try {
        return JSON.parse(out);
      } catch {
        return undefined;
      }
    },
    exited,
    stop: () => {
      proc.kill("SIGTERM");
      return exited;
    },
  };
}

export interface SharedStore {
  cluster: PgCluster;
  /** The database made at set-up, which `homes` share. */
  url: string;
  /** One home per name given to useSharedStore, in that order, all on `url`. */
  homes: Home[];
  /** A home for host `name` on the database `url`, cleaned up after the block. */
  addHome(name: string, url: string): Home;
  /** A home for each of `names` on one new database of their own. */
  addHomes(names: string[]): Home[];
}

/**
 * Databases for the enclosing describe block (call it inside a describePostgres) in its jest
 * worker's PostgreSQL cluster, or with `cluster: "private"` in one started for the block alone
 * (what a block that stops or restarts the server needs: the worker's refuses to), with one
 * database and a home on it per host name in `hostNames`; the accessor is for tests and hooks,
 * and its `homes` (those homes, usable in tests once the block's beforeAll has run) for describe time.
 * After the block: daemons left running are SIGKILLed, then `opts.cleanup` runs, then the
 * unfinished runs' process groups are killed (killLeftovers), the homes removed and a private
 * cluster stopped.
 */
export function useSharedStore(hostNames: string[] = [], opts: { cleanup?: () => unknown; cluster?: "worker" | "private" } = {}): (() => SharedStore) & { homes: Home[] } {
  let shared: SharedStore | undefined;
  const all: Home[] = [];
  let own: PgCluster | undefined;

  beforeAll(async () => {
    const c = opts.cluster === "private" ? (own = await startCluster()) : workerCluster();
    const addHome = (name: string, url: string): Home => {
      const h = tempHome();
      h.env.LI_STORE = url;
      h.env.LI_HOST = name;
      all.push(h);
      return h;
    };
    const url = c.createDatabase();
    shared = {
      cluster: c,
      url,
      homes: hostNames.map((n) => addHome(n, url)),
      addHome,
      addHomes: (names) => {
        const u = c.createDatabase();
        return names.map((n) => addHome(n, u));
      },
    };
  });
  afterAll(async () => {
    killDaemons();
    await opts.cleanup?.();
    await killLeftovers(all);
    for (const h of all) h.cleanup();
    own?.stop();
  });

  const get = () => {
    if (!shared) throw new Error("useSharedStore: its beforeAll has not run yet");
    return shared;
  };
  // The same homes, to take at describe time: each reads through to its home once set up.
  const homes = hostNames.map((_, i): Home => {
    const home = () => get().homes[i];
    return {
      get home() {
        return home().home;
      },
      get env() {
        return home().env;
      },
      cleanup: () => home().cleanup(),
    };
  });
  return Object.assign(get, { homes });
}

/** A mock/hang run on `h`'s host whose agent is ready (see untilAgentReady); its record. */
export async function readyHang(h: Home): Promise<any> {
  const run = await liData(["agent", "--detach", "--prompt-file", "-", "mock/hang"], { env: h.env, input: "x".repeat(READY_BYTES) });
  const j = await untilStatus(h.env, run.id, (j) => j.status === "running" && j.pid);
  await untilAgentReady(j);
  return j;
}

