import { EventEmitter } from "node:events";
import fs from "node:fs";
import { thisHost } from "../../lifecycle/locate.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { sandboxSupport } from "./support.js";
import type { ProviderChild, Sandbox } from "./run.js";
import { mark } from "./marks.js";
import { heldSpec, holdJournal, noteHeldAfterEnd, type HeldFiles } from "../../lifecycle/sandbox-held.js";
import { limitsUnavailable, planLimits, type RunLimits } from "./limits-run.js";

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
  if (s.ok) {
    // A limit a person set that this host cannot enforce: refused as a missing piece is.
    const limits = limitsUnavailable(e);
    if (limits) say(out, `${e.id} did not start: ${limits.error}`);
    return limits;
  }
  const error = `host ${thisHost()} cannot run the workspace sandbox this run asks for: ${s.missing} is missing (${s.remedy})`;
  say(out, `${e.id} did not start: ${error}`);
  return { host: thisHost(), missing: s.missing, remedy: s.remedy, error };
}

const LIVE_MS = 1000;

/** Between looks at the run's cgroup for the OOM killer's work. */
const LIMIT_MS = 250;

export type RunSandbox = Sandbox & {
  record(): Promise<void>;
  /** Called once when the run passes a limit that ends it (memory: sandbox_limit) or its sandbox broke (a bridge: sandbox_failed): the worker records that end and stops it. */
  onLimit(fn: (cause: "sandbox_limit" | "sandbox_failed", detail: Record<string, unknown>) => void): void;
};

/** The sandbox for `e`'s provider, or false when it could not be built (said on the console). */
export async function startSandbox(store: Store, e: Entity, cwd: string, provider: string, env: NodeJS.ProcessEnv, out: number, gateway: string | null = null): Promise<RunSandbox | false> {
  let sandbox: Sandbox;
  let limits: RunLimits | null = null;
  try {
    const [{ prepareSandbox }, { storeReach }] = await Promise.all([import("./run.js"), import("./store-reach.js")]);
    // As recorded now: an isolated run's worktree and branch were written after the worker began.
    const [now, reach] = await Promise.all([store.get(e.id), storeReach(store)]);
    // The run's cgroup is recorded and made while the rest is set up; both are done before the spawn.
    const plan = (limits = planLimits(e));
    // Both settle before either failure is acted on: a cgroup made after a failure was seen would be left behind.
    const [prepared, made] = await Promise.allSettled([prepareSandbox(now ?? e, cwd, provider, env, reach, gateway, plan), plan.make(store)]);
    if (prepared.status === "fulfilled" && made.status === "rejected") prepared.value.close();
    if (prepared.status === "rejected") throw prepared.reason;
    if (made.status === "rejected") throw made.reason;
    sandbox = prepared.value;
  } catch (err: any) {
    limits?.close();
    say(out, `${e.id} did not start: could not build its sandbox (${err?.message ?? err})`);
    return false;
  }
  let recorded: Promise<void> | null = null;
  // Written while the run goes on too, at most once a second and only when something new was
  // refused: a person sees an attempt as it happens, and a run ended by li kill (whose record the
  // killer ends, so its worker cannot write after) keeps what was refused until then.
  let written = 0;
  // The forks past pids are the cgroup's count, added to what the trace saw.
  const result = () => {
    const r = sandbox.result();
    return { ...r, denials: limits!.withRefusals(r.denials) };
  };
  const live = setInterval(() => {
    const d = result().denials;
    if (d.total === written) return;
    written = d.total;
    store.annotate(e.id, { spec: { sandbox_denials: d } }).catch(() => false);
  }, LIVE_MS);
  live.unref();
  // Past the memory limit the kernel kills inside the cgroup: the run ends failed (sandbox_limit), once.
  let onLimit: ((cause: "sandbox_limit" | "sandbox_failed", d: Record<string, unknown>) => void) | null = null;
  let crossed = false;
  const checkLimit = () => {
    const c = crossed ? null : limits!.crossed();
    if (!c) return;
    crossed = true;
    clearInterval(watch);
    say(out, c.error);
    onLimit?.("sandbox_limit", { ...c });
  };
  const watch = setInterval(checkLimit, LIMIT_MS);
  watch.unref();
  // A bridge that never came up or died (run.ts): the run fails closed, its cause on the record.
  sandbox.onFailure((d) => onLimit?.("sandbox_failed", d));
  return {
    ...sandbox,
    result,
    onLimit: (fn) => void (onLimit = fn),
    spawn(argv, opts) {
      const child = sandbox.spawn(argv, opts);
      // Its exit is passed on once the cgroup was looked at: a provider the OOM killer took ends as sandbox_limit.
      const seen = new EventEmitter() as EventEmitter & ProviderChild;
      seen.stdout = child.stdout;
      child.on("error", (err) => seen.emit("error", err));
      child.on("exit", (code, signal) => {
        checkLimit();
        seen.emit("exit", code, signal);
      });
      return seen;
    },
    // Once, from whichever end comes first (the provider's exit, a deadline, a budget stop).
    record: () =>
      (recorded ??= (async () => {
        clearInterval(live);
        clearInterval(watch);
        // Read before the cgroup goes: its refusal count goes with it.
        result();
        // Whatever is still in the run's cgroup is killed and the cgroup removed (a reaper retries
        // what is left), so the sandbox is gone before what it left in the tree is looked at.
        const left = limits!.close();
        if (left.length) say(out, `could not remove the run's cgroup yet: ${left.join(", ")}`);
        sandbox.close();
        const r = result();
        if (r.held?.held.length) say(out, `the agent created files that run code when the tree is opened: ${r.held.held.join(", ")}; li moved them out of the tree, to ${e.run_dir}/sandbox/held`);
        if (r.held?.unheld.length) say(out, `the agent created files that run code when the tree is opened which li could not move out of the tree: ${r.held.unheld.join(", ")}; look at them before opening the tree`);
        for (const c of r.denials.credentials ?? []) say(out, `the run changed ${c.path} in a way that is no token refresh (${c.reason}: ${c.detail}); the person's file was left as it was`);
        if (r.denials.total) say(out, `the sandbox refused ${r.denials.total} call${r.denials.total === 1 ? "" : "s"} (li job status ${e.id} lists them)`);
        // A record li kill already ended takes what was held as a late fact (sandbox_held_after_end).
        const late = (h: HeldFiles | undefined) => !!h && (h.held.length > 0 || h.unheld.length > 0);
        const written = await store
          .annotate(e.id, { spec: { sandbox_denials: r.denials, ...(r.held ? heldSpec(r.held) : {}) } })
          .then(async (live) => live || !late(r.held) || (await noteHeldAfterEnd(store, e.id, r.held!), true))
          .catch(() => false);
        // Held and named: nothing is owed any more (lifecycle/sandbox-held.ts). A store that
        // refused the write keeps the journal, and a reaper or li kill that finds this worker gone
        // holds and names them.
        if (written && r.held) fs.rmSync(holdJournal(e.run_dir!), { force: true });
        mark("recorded");
      })()),
  };
}
