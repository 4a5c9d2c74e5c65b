import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readProcStat } from "../../src/lifecycle/procfs.js";
import { createDatabase } from "./postgres.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const LI_BIN = path.join(ROOT, "bin", "li.js");

export type Home = ReturnType<typeof tempHome>;

/** A fresh LI_HOME, removed by the caller's cleanup (see tempHome().cleanup). */
export function tempHome(): { home: string; env: NodeJS.ProcessEnv; cleanup: () => void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-test-"));
  const env: NodeJS.ProcessEnv = { ...process.env, LI_HOME: home, NODE_OPTIONS: "" };
  delete env.LI_STORE;
  if (process.env.LI_TEST_STORE === "postgres") env.LI_STORE = testDatabase();
  return { home, env, cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
}

/** A new, empty database in the postgres project's cluster (test/helpers/pg-global.mjs); its URL. */
function testDatabase(): string {
  const port = process.env.LI_TEST_PG_PORT;
  if (!port) throw new Error("LI_TEST_STORE=postgres without a cluster: run through jest's postgres project");
  return createDatabase(port);
}

export interface LiRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The parsed li.result envelope when stdout holds exactly one JSON value. */
  json?: any;
}

/** Runs the built CLI (`node bin/li.js …`). */
export function li(args: string[], opts: { env: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string; timeoutMs?: number }): Promise<LiRun> {
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
    child.stdin.end(opts.input ?? "");
  });
}

/** `li --machine …` and its data; throws with the error envelope when not ok. */
export async function liData(args: string[], opts: { env: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string }): Promise<any> {
  const r = await li(["--machine", ...args], opts);
  if (!r.json?.ok) throw new Error(`li ${args.join(" ")} failed (exit ${r.code}): ${r.stdout}${r.stderr}`);
  return r.json.data;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value or the deadline passes. */
export async function until<T>(fn: () => Promise<T> | T, timeoutMs = 20000, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
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
