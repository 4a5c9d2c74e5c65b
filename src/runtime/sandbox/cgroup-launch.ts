import type { RunCgroup } from "./cgroup.js";
import { ENTER_CGROUP } from "./launcher.js";
import { scopeLaunch } from "./systemd-scope.js";

/*
 * How the sandbox's first process gets into the run's cgroup (docs/sandbox.md#limits), before any
 * of the agent's code runs: through systemd-run, which starts it inside the run's transient scope,
 * or by a shell that writes its own pid into each cgroup.procs li made and then becomes the command.
 */
export function inCgroup(cg: RunCgroup | null, argv: string[], env: NodeJS.ProcessEnv): { file: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (cg?.scope) {
    const l = scopeLaunch(cg.scope, cg.scope.id, cg.scope.limits, argv, env);
    return { file: cg.scope.systemdRun, args: l.args, env: l.env };
  }
  if (cg?.procs.length) return { file: "/bin/sh", args: ["-c", ENTER_CGROUP, "li-cgroup", ...cg.procs, "--", ...argv], env };
  return { file: argv[0], args: argv.slice(1), env };
}
