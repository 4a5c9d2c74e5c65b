/**
 * `li rerun ID`: the stored request of a top-level run submitted again as a new run, through
 * the same submit paths (so it queues, validates and records like any submission), with
 * spec.rerun_of naming the run it repeats. The request is what was stored: the prompt
 * snapshot in runs/<id>/prompt.txt and the spec, with the endpoint looked up by name again.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid, LiError } from "../../errors.js";
import { isForeign } from "../../lifecycle/locate.js";
import { placedPrompt } from "../../lifecycle/placed.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import type { SessionSpec } from "../flow/request.js";
import { submitSession } from "../flow/request.js";
import { submitPlay } from "./play-submit.js";
import { checkCwd, checkPrompt } from "./prompt.js";
import { parseModelSpec, requireAvailable } from "../providers/index.js";
import { resolveEndpoint, usesEndpoint } from "./settings-bridge.js";
import { freshIsolation } from "../worktree/isolation.js";
import { submitAgent } from "./submit.js";
import { sandboxWanted } from "../sandbox/choice.js";

/** A session run again keeps its mode; under a floor (li mcp --sandbox workspace) it is raised. */
const keptSandbox = (s: SessionSpec) => sandboxWanted({ kept: s.sandbox ?? "off" }, s.settings_dir);

export interface Rerun {
  entity: Entity;
  pid: number | null;
  console_log: string | null;
}

/**
 * The stored prompt: the store's copy (every placed run, and every top-level run on a shared
 * store, keeps one), else the run directory's snapshot on this host; not_found when neither is
 * here (li clean, or a person, removed the directory; or it is on the host the run ran on).
 */
export async function storedPrompt(store: Store, e: Entity): Promise<string> {
  const kept = await placedPrompt(store, e.id);
  if (kept !== null) return kept;
  const file = e.run_dir ? path.join(e.run_dir, "prompt.txt") : null;
  try {
    return fs.readFileSync(file!, "utf8");
  } catch {
    if (isForeign(e))
      throw new LiError("not_found", `the stored prompt of ${e.id} is on host ${e.host}, in its run directory (the store kept no copy of it); run li rerun ${e.id} on ${e.host}`, { id: e.id, host: e.host, file });
    throw new LiError("not_found", `the stored prompt of ${e.id} is gone (${file ?? "it has no run directory"}); there is nothing to run again`, { id: e.id, file });
  }
}

/**
 * Where a rerun goes: the --host given; else where the old run was placed (--host NAME|any);
 * else, for a run that ran on another host, that host (its directory and settings are there);
 * else here (undefined).
 */
export function rerunPlace(old: Entity, host: string | undefined): string | undefined {
  if (host !== undefined) return host;
  if (old.place !== null) return old.place;
  return isForeign(old) ? old.host! : undefined;
}

function checkModels(models: (string | null | undefined)[], endpoint: () => ReturnType<typeof resolveEndpoint>): void {
  for (const m of new Set(models.filter((x): x is string => !!x))) {
    const spec = parseModelSpec(m);
    requireAvailable(spec, spec.provider.usesEndpoint ? { endpoint: endpoint() } : {});
  }
}

/**
 * Submits `old`'s request again; `queue` overrides the queue it waited in, if any, and `host`
 * the placement it keeps (rerunPlace), checked as a new submission's --host is.
 */
export async function rerun(store: Store, old: Entity, opts: { queue?: string; host?: string; allowNewHost?: boolean } = {}): Promise<Rerun> {
  if (old.parent_id)
    throw invalid(`${old.id} is part of ${old.parent_id}, whose supervisor started it; rerun the top-level run instead (li rerun ${old.parent_id}, or the play above it)`, {
      id: old.id,
      parent_id: old.parent_id,
    });
  const prompt = checkPrompt(await storedPrompt(store, old));
  const queue = opts.queue ?? old.queue ?? undefined;
  const host = rerunPlace(old, opts.host);
  const place = { host, allowNewHost: opts.allowNewHost };
  const link = { rerun_of: old.id };
  const spec = old.spec;
  if (old.kind === "invocation") {
    return submitAgent(
      store,
      {
        model: spec.model,
        prompt,
        cwd: spec.cwd,
        timeout_seconds: spec.timeout_seconds ?? undefined,
        label: old.label,
        notify: spec.notify ?? [],
        endpoint: usesEndpoint(spec.model) ? resolveEndpoint(spec.endpoint ?? undefined, spec.settings_dir) : null,
        queue,
        ...(host !== undefined ? { host, allow_new_host: opts.allowNewHost } : {}),
        ...(spec.sandbox === "workspace" || spec.sandbox === "off" ? { sandbox_kept: spec.sandbox } : {}),
      },
      // An isolated run runs again isolated, from the same base, in a worktree of its own.
      { ...link, settings_dir: spec.settings_dir ?? process.cwd(), ...(spec.isolation ? { isolation: freshIsolation(spec.isolation) } : {}) },
    );
  }
  if (old.kind === "session") {
    const s = spec as unknown as SessionSpec;
    checkCwd(s.cwd, host);
    // A plan the orchestrator made is planned afresh, as the original was.
    const plan = s.planned_by === "model" ? null : s.plan;
    checkModels([s.model, ...s.workers, s.synthesis?.model, ...(plan?.steps.map((st) => st.model) ?? [])], () => resolveEndpoint(s.endpoint ?? undefined, s.settings_dir));
    return submitSession(store, { prompt, spec: { ...s, plan, isolation: s.isolation ? freshIsolation(s.isolation) : null, sandbox: keptSandbox(s) } }, { label: old.label, queue, extraSpec: link, ...place });
  }
  const { session_id: _made, ...playSpec } = spec;
  const session = playSpec.session as SessionSpec;
  checkCwd(session.cwd, host);
  return submitPlay(store, {
    ...place,
    label: old.label,
    spec: { ...playSpec, session: { ...session, plan: session.planned_by === "model" ? null : session.plan, isolation: session.isolation ? freshIsolation(session.isolation) : null, sandbox: keptSandbox(session) }, ...link },
    prompt,
    queue,
  });
}
