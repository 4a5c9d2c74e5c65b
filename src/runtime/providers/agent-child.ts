import { spawn, type ChildProcess } from "node:child_process";

/*
 * The agent process an asking route's client drives (acp/, codex-app-server/): started with piped
 * stdio, its stderr passed on with its tail kept, and how it ended noted, so a turn that fails can
 * say what the agent did and last said.
 */

/** How much of the agent's stderr a failure quotes. */
const STDERR_TAIL = 2000;

export interface AgentChild {
  child: ChildProcess;
  /** Resolves once the agent has exited or could not start. */
  gone: Promise<void>;
  /** How it ended (`exited 1`, `killed by SIGKILL`, `could not start: …`); null while it runs. */
  exited(): string | null;
  /** `what`, with how the agent (`name`) ended and the tail of its stderr. */
  failure(what: string): string;
}

export function startAgent(argv: string[], env: NodeJS.ProcessEnv, name: string): AgentChild {
  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env });
  let stderrTail = "";
  child.stderr!.on("data", (d: Buffer) => {
    process.stderr.write(d);
    stderrTail = (stderrTail + d.toString("utf8")).slice(-STDERR_TAIL);
  });
  let exited: string | null = null;
  const gone = new Promise<void>((resolve) => {
    child.on("exit", (code, signal) => ((exited = signal ? `killed by ${signal}` : `exited ${code}`), resolve()));
    child.on("error", (err) => ((exited = `could not start: ${err.message}`), resolve()));
  });
  return {
    child,
    gone,
    exited: () => exited,
    failure: (what) => {
      const tail = stderrTail.trim();
      return `${what}${exited ? ` (${name} ${exited})` : ""}${tail ? `; its stderr ends: ${tail}` : ""}`;
    },
  };
}
