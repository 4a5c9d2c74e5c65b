import { isSameProcess, selfStat } from "../lifecycle/procfs.js";

/*
 * What `li mcp` tells each li it starts, through the environment: who the server is, and
 * whether its caller wants progress.
 */

/** Set when the caller asked for progress: an observer writes one JSON line per poll on stderr. */
export const PROGRESS_ENV = "LI_PROGRESS_JSON";

/**
 * Set by `li mcp --read-only` (or mcp.policy.read_only) on every li it starts: that li captures
 * no isolated run's change and runs no check (lifecycle/changes/owed.ts says where each waits).
 */
export const READS_ONLY_ENV = "LI_READS_ONLY";

/** Set by `li mcp` on every li it starts: the server's `pid:starttime`, one process for good. */
export const SERVER_ENV = "LI_MCP_SERVER";

/** What `li mcp` puts in SERVER_ENV: itself, by pid and /proc start time. */
export function serverIdentity(): string {
  const s = selfStat();
  return `${s.pid}:${s.starttime}`;
}

let server: { pid: number; start: number } | undefined;
let fromServer = false;

/** True when the MCP server started this li (its bounds for programs apply, e.g. li wait's 50 s). */
export const startedByServer = () => fromServer;

/**
 * Takes the server identity out of the environment at start-up, so nothing this li starts (a
 * worker, an agent that runs li itself) inherits a server that is not its own.
 */
export function takeServerIdentity(): void {
  const raw = process.env[SERVER_ENV];
  if (raw === undefined) return;
  fromServer = true;
  delete process.env[SERVER_ENV];
  const [pid, start] = raw.split(":").map(Number);
  if (Number.isInteger(pid) && pid > 1 && Number.isFinite(start)) server = { pid, start };
}

/**
 * An observer started by the MCP server ends by itself soon after that server is gone (killed,
 * crashed): nobody is left to read its answer. It only stops observing; no record is touched.
 * The server is checked by identity, not as the parent, so a wrapper in between changes nothing.
 */
export function exitWhenServerGone(everyMs = 500): void {
  if (!server) return;
  const { pid, start } = server;
  const check = () => {
    if (!isSameProcess(pid, start)) process.exit(1);
  };
  check();
  setInterval(check, everyMs).unref();
}
