import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Store } from "../lifecycle/store.js";
import { parseModelSpec } from "./providers/index.js";
import { resolveEndpoint } from "./settings-bridge.js";
import { publishRunning } from "./spawn.js";

/** Seconds between SIGTERM and SIGKILL when a run passes its --timeout. */
const TIMEOUT_GRACE_MS = 2000;

/** Node fires a setTimeout delay above 2^31-1 ms after 1 ms; longer deadlines are chained. */
const MAX_DELAY_MS = 2 ** 31 - 1;
function deadline(ms: number, fn: () => void): { clear(): void } {
  let t: NodeJS.Timeout;
  const arm = (left: number) => {
    t = setTimeout(left > MAX_DELAY_MS ? () => arm(left - MAX_DELAY_MS) : fn, Math.min(left, MAX_DELAY_MS));
  };
  arm(ms);
  return { clear: () => clearTimeout(t) };
}

/** Runs one invocation's provider process and records how it ended. */
export async function run(store: Store, id: string): Promise<void> {
  const e = publishRunning(store, id, "invocation");
  // Killed or reaped before it could start: nothing to run.
  if (!e) return;
  const pgid = e.pgid!;
  const dir = e.run_dir!;
  const promptFile = path.join(dir, "prompt.txt");
  const out = fs.openSync(path.join(dir, "console.log"), "a", 0o600);

  const finish = (to: string, cause: string, exit_code: number | null, detail?: Record<string, unknown>) =>
    store.transition({ id, to, reason: `invocation.${to}.${cause}`, source: "runtime", expect: { status: "running" }, patch: { exit_code }, detail });

  let launch;
  try {
    const spec = parseModelSpec(e.spec.model);
    // Resolved now, from the settings where the run was submitted: the record holds only the name.
    const options = spec.provider.usesEndpoint ? { endpoint: resolveEndpoint(e.spec.endpoint ?? undefined, e.spec.settings_dir) } : {};
    launch = spec.provider.launch(spec.model, promptFile, options);
  } catch (err: any) {
    fs.writeSync(out, `li: ${err?.message ?? err}\n`);
    finish("failed", "spawn_error", null);
    return;
  }

  // A kill that landed after `running` was published: do not start the provider at all.
  if (store.get(id)?.status !== "running") return;
  const stdin = launch.stdin === "prompt" ? fs.openSync(promptFile, "r") : "ignore";
  await new Promise<void>((resolve) => {
    const child = spawn(launch.argv[0], launch.argv.slice(1), {
      cwd: e.spec.cwd,
      stdio: [stdin, out, out],
      env: { ...process.env, ...launch.env },
    });
    let timer: { clear(): void } | undefined;
    if (e.spec.timeout_seconds) {
      timer = deadline(e.spec.timeout_seconds * 1000, () => {
        // Record first, then kill the whole group (this worker included) so nothing outlives the deadline.
        finish("timed_out", "deadline", null, { timeout_seconds: e.spec.timeout_seconds });
        try {
          process.kill(-pgid, "SIGTERM");
        } catch {}
        setTimeout(() => {
          try {
            process.kill(-pgid, "SIGKILL");
          } catch {}
        }, TIMEOUT_GRACE_MS);
      });
    }
    child.on("error", (err) => {
      timer?.clear();
      fs.writeSync(out, `li: could not start ${launch.argv[0]}: ${err.message}\n`);
      finish("failed", "spawn_error", null, { error: err.message });
      resolve();
    });
    child.on("exit", (code, signal) => {
      timer?.clear();
      if (code === 0) finish("completed", "exit_zero", 0);
      else if (signal) finish("failed", "signal", null, { signal });
      else finish("failed", "exit_nonzero", code);
      resolve();
    });
  });
}
