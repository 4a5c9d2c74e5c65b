import type { ChildProcess } from "node:child_process";
import { childProcess } from "../packages.js";
import fs from "node:fs";
import { LiError } from "../errors.js";
import { HANDOFF_ENV, PG_CREDENTIAL_ENV, postgresInUse, STORE_ENV } from "./child-env.js";
import { LISTEN_ENV } from "./locate.js";

/*
 * How a li process li starts (a worker, a session's or a flow's worker, a notify drainer) learns
 * the store's address and credentials without them ever being in its environment (issue 25). A
 * process's exec-time environment stays readable in /proc/<pid>/environ for its whole life, to
 * every process of the same user: an agent could read it from its worker, its parent. So the
 * variables that reach the store (LI_STORE, LI_STORE_LISTEN, and libpq's credential variables while the store is
 * PostgreSQL: child-env.ts) are left out of the child's environment and written instead to a pipe
 * it inherits as descriptor 3 (named by LI_STORE_FD). The child reads it to its end, closes it and
 * puts them in its own process.env, which changes nothing /proc shows, before it opens the store;
 * the agents it starts get childEnv's environment as before. Nothing is handed over when there is
 * nothing to hide (state.db, no LI_STORE): li starts its processes as it always did.
 */

const FD = 3;

/** The variables of `base` that reach the store, which a li process receives by handoff instead. */
export function storeSecrets(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const names = [STORE_ENV, LISTEN_ENV, ...(postgresInUse(base) ? PG_CREDENTIAL_ENV : [])];
  const out: Record<string, string> = {};
  for (const name of names) if (base[name] !== undefined) out[name] = base[name]!;
  return out;
}

/**
 * Starts `node <script> <args…>`, detached in its own session with no stdio, as li starts its own
 * processes; the store's secrets go over the pipe, never into its environment.
 */
export function startLiProcess(script: string, args: string[]): ChildProcess {
  const secrets = storeSecrets();
  if (!Object.keys(secrets).length) return childProcess().spawn(process.execPath, [script, ...args], { detached: true, stdio: "ignore", env: process.env });
  const env: NodeJS.ProcessEnv = { ...process.env, [HANDOFF_ENV]: String(FD) };
  for (const name of Object.keys(secrets)) delete env[name];
  const child = childProcess().spawn(process.execPath, [script, ...args], { detached: true, stdio: ["ignore", "ignore", "ignore", "pipe"], env });
  const pipe = child.stdio[FD] as NodeJS.WritableStream & { on(e: "error", f: () => void): unknown };
  // A child that died at once closes its end: what it never read it cannot have needed.
  pipe.on("error", () => {});
  // A few hundred bytes: the kernel takes them at once, so a parent that exits next loses nothing.
  pipe.end(JSON.stringify(secrets));
  return child;
}

/**
 * In a process li started with a handoff: reads the store's secrets from the inherited pipe,
 * closes it and sets them in process.env. A handoff announced but not received (the parent died
 * first) is an error, never a fall back to another store (state.db) that would take its writes.
 */
export function receiveStoreSecrets(): void {
  const named = process.env[HANDOFF_ENV];
  if (named === undefined) return;
  delete process.env[HANDOFF_ENV];
  const fd = Number(named);
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } catch (err: any) {
    throw new LiError("unavailable", `li could not read the store's address from the process that started it (descriptor ${named}: ${err?.code ?? err?.message ?? err})`, { reason: "store_handoff" });
  } finally {
    try {
      fs.closeSync(fd);
    } catch {}
  }
  let secrets: unknown;
  try {
    secrets = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    secrets = null;
  }
  if (!secrets || typeof secrets !== "object" || Array.isArray(secrets))
    throw new LiError("unavailable", "li did not receive the store's address from the process that started it (it ended first?)", { reason: "store_handoff" });
  for (const [name, value] of Object.entries(secrets)) if (typeof value === "string") process.env[name] = value;
}
