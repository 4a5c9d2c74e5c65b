import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readProcStat } from "../../src/lifecycle/procfs.js";
import { workerCluster } from "./postgres.js";
import { workerPooler } from "./pg-worker.mjs";
import { PGBOUNCER_HINT, pgbouncerBin } from "./pgbouncer.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const LI_BIN = path.join(ROOT, "bin", "li.js");

export type Home = ReturnType<typeof tempHome>;

let saidDirect = false;
/**
 * Whether the postgres project's homes reach their stores through PgBouncer: where it is installed
 * (LI_TEST_PG_DIRECT=1 says no); without it they go direct with a hint, unless
 * LI_TEST_REQUIRE_PGBOUNCER makes its absence a failure.
 */
function pooledProject(): boolean {
  if (process.env.LI_TEST_PG_DIRECT === "1") return false;
  if (pgbouncerBin()) return true;
  if (process.env.LI_TEST_REQUIRE_PGBOUNCER) throw new Error(PGBOUNCER_HINT);
  if (!saidDirect) console.warn(`the postgres project's stores are reached directly: ${PGBOUNCER_HINT}`);
  saidDirect = true;
  return false;
}

/**
 * A fresh LI_HOME, removed by the caller's cleanup (see tempHome().cleanup). In the postgres
 * project its store is a new database in this jest worker's cluster: a copy of one li has
 * already migrated, or with `emptyStore` an empty one, for a test of what the first write or
 * `li state migrate` does to a database without li's schema.
 */
export function tempHome(opts: { emptyStore?: boolean } = {}): { home: string; env: NodeJS.ProcessEnv; cleanup: () => void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-test-"));
  // One folder of exec-only program copies (src/runtime/sandbox/exec-only.ts) for every test home: a home's own would copy node (and claude's binary) per test.
  const env: NodeJS.ProcessEnv = { ...process.env, LI_HOME: home, NODE_OPTIONS: "", LI_EXEC_ONLY_DIR: process.env.LI_EXEC_ONLY_DIR ?? path.join(os.tmpdir(), `li-test-exec-only-${process.getuid?.() ?? 0}`) };
  delete env.LI_STORE;
  if (process.env.LI_TEST_STORE === "postgres") {
    const direct = workerCluster().createDatabase({ migrated: !opts.emptyStore });
    // Through the worker's PgBouncer in transaction mode, LISTEN on the direct URL (issue 49), as
    // a team reaches hosted PostgreSQL; the suites with shared stores (useSharedStore) go direct.
    if (pooledProject()) Object.assign(env, { LI_STORE: workerPooler().url(direct), LI_STORE_LISTEN: direct });
    else env.LI_STORE = direct;
  }
  // Retried: a detached run's worker may still be writing its last files as a test ends (ENOTEMPTY).
  return { home, env, cleanup: () => fs.rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export interface LiRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The parsed li.result envelope when stdout holds exactly one JSON value. */
  json?: any;
}

/** Runs the built CLI (`node bin/li.js …`), from ROOT unless `cwd` says otherwise. */
export function li(args: string[], opts: { env: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string; timeoutMs?: number }): Promise<LiRun> {
  // An isolated run from li's own checkout would leave its li/<id> branch there: a test makes its own repository.
  const from = path.resolve(opts.cwd ?? ROOT);
  if ((from === ROOT || from.startsWith(ROOT + path.sep)) && args.some((a, i) => (a === "--isolate" && args[i + 1] === "worktree") || a === "--isolate=worktree"))
    throw new Error(`li ${args.join(" ")}: an isolated run from li's own checkout (${from}) would branch it; pass cwd: a repository the test made`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LI_BIN, ...args], { env: opts.env, cwd: opts.cwd ?? ROOT, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      let json: any;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr: Buffer.concat(err).toString("utf8"), json });
    });
    ignoreEpipe(child.stdin, reject);
    child.stdin.end(opts.input ?? "");
  });
}

/**
 * A child's input that may close before a write lands: a process that never reads it, or one that
 * has exited, makes the write fail with EPIPE, which says nothing about the process (its exit and
 * output do). Without a listener that error is uncaught and fails whichever test is running. Any
 * other error goes to `onError` (by default it is thrown, as it was).
 */
export function ignoreEpipe(stream: NodeJS.WritableStream, onError: (e: Error) => void = (e) => { throw e; }): void {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") onError(e);
  });
}

/** `li --machine …` and its data; throws with the error envelope when not ok. */
export async function liData(args: string[], opts: { env: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string }): Promise<any> {
  const r = await li(["--machine", ...args], opts);
  if (!r.json?.ok) throw new Error(`li ${args.join(" ")} failed (exit ${r.code}): ${r.stdout}${r.stderr}`);
  return r.json.data;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long a wait on a condition goes on by default: it says only that something is stuck, never
 * how fast it came (CONTRIBUTING), so it is set for a loaded 2-core machine (at a load average
 * of 19, approvals' test of a run and a fan-out on PostgreSQL took 30 s, its two 20 s waits near
 * their ends), inside jest's minute per test.
 */
export const WAIT_MS = 45_000;

/** Polls `fn` until it returns a truthy value or the deadline passes. */
export async function until<T>(fn: () => Promise<T> | T, timeoutMs = WAIT_MS, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(intervalMs);
  }
}

/*
 * The wall-clock allowance (CONTRIBUTING: speed is never asserted by a timed test). A test asserts
 * what happened, in what order, with what result, never how fast. A measured duration may appear
 * in an expectation only through one of these, each about a time the code under test sets
 * itself, so a slow or loaded machine cannot fail them:
 *
 * - spentAtLeast: it spent at least a time it promises to spend (a poll floor, a grace period, a
 *   sleep, a window). Slowness only lengthens a duration.
 * - endedBefore / untilBefore: it ended (or a condition came about) before a deadline of the
 *   code's own (a wait's window, a poll interval) that it would have run out had the behaviour
 *   been wrong; the deadline is many times the expected time, and nothing but that wrong
 *   behaviour comes near it. Prefer a result field that proves the same (timed_out, a count
 *   of looks, the order of events) where there is one.
 *
 * `grep -nE "Date.now|performance.now|elapsed|took" test/*.test.ts` finds every other use of the
 * clock: making timestamps and ages for fixtures, or reading one the code reported.
 */

/** Expects `measuredSeconds` (what the code reported, or the test measured around it) to be at least `promisedSeconds`. */
export function spentAtLeast(measuredSeconds: number, promisedSeconds: number, what: string): void {
  // Timers may fire up to a millisecond early, and reported seconds are rounded to the millisecond.
  expect([what, measuredSeconds >= promisedSeconds - 0.002]).toEqual([what, true]);
}

/** Expects `measuredSeconds` (reported by the code) to be under `deadlineSeconds`, a deadline of its own it would have reached had the behaviour been wrong. */
export function endedBefore(measuredSeconds: number, deadlineSeconds: number, what: string): void {
  expect([what, measuredSeconds < deadlineSeconds]).toEqual([what, true]);
}

/** Polls `fn` until it holds; fails if `deadlineMs` (epoch ms, a deadline of the code under test) passes first. */
export async function untilBefore<T>(fn: () => Promise<T> | T, deadlineMs: number, what: string, intervalMs = 100): Promise<T> {
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() >= deadlineMs) throw new Error(`${what}: not before its own deadline (${new Date(deadlineMs).toISOString()})`);
    await sleep(intervalMs);
  }
}

/**
 * Live (non-zombie) members of process group `pgid`, by a /proc scan. PID 1 here reaps orphans
 * only every few seconds, and `kill -0` would count a zombie still waiting to be reaped.
 */
export function liveMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readProcStat(Number(name));
    if (s && s.pgrp === pgid) out.push(s.pid);
  }
  return out;
}

/** True when some live (non-zombie) process is in process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  return liveMembers(pgid).length > 0;
}

export { execFile };
