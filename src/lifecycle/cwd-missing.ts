import fs from "node:fs";
import type { Entity } from "./records.js";

/*
 * A run whose working directory does not exist where it was to start (issue 22): most often a
 * run placed with --host, whose cwd defaults to the submitter's directory, claimed by a host that
 * has no such directory; or a schedule created on one machine and fired on another. It ends
 * `<kind>.failed.cwd_missing` before anything is spawned, and every view says which directory
 * on which host, from the record alone (its spec's cwd and the host that claimed it).
 */

/** The cause in reason codes: `<kind>.failed.cwd_missing`. */
export const CWD_MISSING = "cwd_missing";

/** The directory a run starts in: an agent run's or a session's cwd, a play's session's. */
export function runCwd(e: Pick<Entity, "spec">): string | null {
  const cwd = e.spec.cwd ?? e.spec.session?.cwd;
  return typeof cwd === "string" ? cwd : null;
}

/** What every view says of it. */
export function cwdMissingMessage(cwd: string, host: string | null): string {
  return (
    `its working directory ${cwd} does not exist on host ${host ?? "(unknown)"}, where it was to run. ` +
    `A run placed with --host (or a schedule) keeps the cwd of the machine it was submitted from: give --cwd a directory that exists on every host it may run on, or place it on a host that has this one`
  );
}

export interface CwdMissing {
  reason: typeof CWD_MISSING;
  cwd: string;
  host: string | null;
  message: string;
}

/** The detail views show for a run that ended cwd_missing; null for any other record. */
export function cwdMissingDetail(e: Pick<Entity, "spec" | "host" | "reason_code">): CwdMissing | null {
  if (!e.reason_code?.endsWith(`.failed.${CWD_MISSING}`)) return null;
  const cwd = runCwd(e) ?? "(none recorded)";
  return { reason: CWD_MISSING, cwd, host: e.host, message: cwdMissingMessage(cwd, e.host) };
}

/** Whether `dir` is an existing directory here. */
export function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
