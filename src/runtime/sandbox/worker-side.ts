import fs from "node:fs";
import { thisHost } from "../../lifecycle/locate.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { sandboxSupport } from "./support.js";
import type { Sandbox } from "./run.js";
import { mark } from "./marks.js";
import { heldSpec, holdJournal } from "../../lifecycle/sandbox-held.js";

/*
 * The worker's side of a sandboxed run (spec.sandbox = workspace): a host that cannot sandbox ends
 * the run failed (sandbox_unavailable) before anything starts, never runs it bare; else the
 * provider starts inside the sandbox, and its refusals are written on the record when it ends.
 */

function say(out: number, line: string): void {
  try {
    fs.writeSync(out, `li: ${line}\n`);
  } catch {}
}

/** Why this host cannot run `e` as it asks (the run's failure detail), or null. */
export function sandboxUnavailable(e: Entity, out: number): { host: string; missing: string; remedy: string; error: string } | null {
  if (e.spec.sandbox !== "workspace") return null;
  mark("worker-start", performance.timeOrigin);
  mark("support-start");
  const s = sandboxSupport();
  mark("support-known");
  if (s.ok) return null;
  const error = `host ${thisHost()} cannot run the workspace sandbox this run asks for: ${s.missing} is missing (${s.remedy})`;
  say(out, `${e.id} did not start: ${error}`);
  return { host: thisHost(), missing: s.missing, remedy: s.remedy, error };
}

const LIVE_MS = 1000;

export type RunSandbox = Sandbox & { record(): Promise<void> };

/** The sandbox for `e`'s provider, or false when it could not be built (said on the console). */
export async function startSandbox(store: Store, e: Entity, cwd: string, provider: string, env: NodeJS.ProcessEnv, out: number, gateway: string | null = null): Promise<RunSandbox | false> {
  let sandbox: Sandbox;
  try {
    const [{ prepareSandbox }, { storeReach }] = await Promise.all([import("./run.js"), import("./store-reach.js")]);
    // As recorded now: an isolated run's worktree and branch were written after the worker began.
    const [now, reach] = await Promise.all([store.get(e.id), storeReach(store)]);
    sandbox = await prepareSandbox(now ?? e, cwd, provider, env, reach, gateway);
  } catch (err: any) {
    say(out, `${e.id} did not start: could not build its sandbox (${err?.message ?? err})`);
    return false;
  }
  let recorded: Promise<void> | null = null;
  // Written while the run goes on too, at most once a second and only when something new was
  // refused: a person sees an attempt as it happens, and a run ended by li kill (whose record the
  // killer ends, so its worker cannot write after) keeps what was refused until then.
  let written = 0;
  const live = setInterval(() => {
    const d = sandbox.result().denials;
    if (d.total === written) return;
    written = d.total;
    store.annotate(e.id, { spec: { sandbox_denials: d } }).catch(() => false);
  }, LIVE_MS);
  live.unref();
  return {
    ...sandbox,
    // Once, from whichever end comes first (the provider's exit, a deadline, a budget stop).
    record: () =>
      (recorded ??= (async () => {
        clearInterval(live);
        sandbox.close();
        const r = sandbox.result();
        if (r.held?.held.length) say(out, `the agent created files that run code when the tree is opened: ${r.held.held.join(", ")}; li moved them out of the tree, to ${e.run_dir}/sandbox/held`);
        if (r.held?.unheld.length) say(out, `the agent created files that run code when the tree is opened which li could not move out of the tree: ${r.held.unheld.join(", ")}; look at them before opening the tree`);
        if (r.denials.total) say(out, `the sandbox refused ${r.denials.total} call${r.denials.total === 1 ? "" : "s"} (li job status ${e.id} lists them)`);
        const written = await store.annotate(e.id, { spec: { sandbox_denials: r.denials, ...(r.held ? heldSpec(r.held) : {}) } }).then(
          () => true,
          () => false,
        );
        // Held and named (or the record already ended by li kill, which only the console tells):
        // nothing is owed any more (lifecycle/sandbox-held.ts). A store that refused the write
        // keeps the journal, and a reaper that finds this worker gone holds and names them.
        if (written && r.held) fs.rmSync(holdJournal(e.run_dir!), { force: true });
        mark("recorded");
      })()),
  };
}
