/**
 * `li rerun ID`: the stored request of a top-level run submitted again as a new run, through
 * the same submit paths (so it queues, validates and records like any submission), with
 * spec.rerun_of naming the run it repeats. The request is what was stored: the prompt
 * snapshot in runs/<id>/prompt.txt and the spec, with the endpoint looked up by name again.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid, LiError } from "../errors.js";
import type { Entity, Store } from "../lifecycle/store.js";
import type { SessionSpec } from "./flow/request.js";
import { submitSession } from "./flow/request.js";
import { submitPlay } from "./play-submit.js";
import { checkCwd, checkPrompt } from "./prompt.js";
import { parseModelSpec, requireAvailable } from "./providers/index.js";
import { resolveEndpoint, usesEndpoint } from "./settings-bridge.js";
import { submitAgent } from "./submit.js";

export interface Rerun {
  entity: Entity;
  pid: number | null;
  console_log: string | null;
}

/** The stored prompt, or not_found when li clean (or a person) removed the run's directory. */
export function storedPrompt(e: Entity): string {
  const file = e.run_dir ? path.join(e.run_dir, "prompt.txt") : null;
  try {
    return fs.readFileSync(file!, "utf8");
  } catch {
    throw new LiError("not_found", `the stored prompt of ${e.id} is gone (${file ?? "it has no run directory"}); there is nothing to run again`, { id: e.id, file });
  }
}

function checkModels(models: (string | null | undefined)[], endpoint: () => ReturnType<typeof resolveEndpoint>): void {
  for (const m of new Set(models.filter((x): x is string => !!x))) {
    const spec = parseModelSpec(m);
    requireAvailable(spec, spec.provider.usesEndpoint ? { endpoint: endpoint() } : {});
  }
}

/** Submits `old`'s request again; `queue` overrides the queue it waited in, if any. */
export async function rerun(store: Store, old: Entity, opts: { queue?: string } = {}): Promise<Rerun> {
  if (old.parent_id)
    throw invalid(`${old.id} is part of ${old.parent_id}, whose supervisor started it; rerun the top-level run instead (li rerun ${old.parent_id}, or the play above it)`, {
      id: old.id,
      parent_id: old.parent_id,
    });
  const prompt = checkPrompt(storedPrompt(old));
  const queue = opts.queue ?? old.queue ?? undefined;
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
      },
      { ...link, settings_dir: spec.settings_dir ?? process.cwd() },
    );
  }
  if (old.kind === "session") {
    const s = spec as unknown as SessionSpec;
    checkCwd(s.cwd);
    // A plan the orchestrator made is planned afresh, as the original was.
    const plan = s.planned_by === "model" ? null : s.plan;
    checkModels([s.model, ...s.workers, s.synthesis?.model, ...(plan?.steps.map((st) => st.model) ?? [])], () => resolveEndpoint(s.endpoint ?? undefined, s.settings_dir));
    return submitSession(store, { prompt, spec: { ...s, plan } }, { label: old.label, queue, extraSpec: link });
  }
  const { session_id: _made, ...playSpec } = spec;
  const session = playSpec.session as SessionSpec;
  checkCwd(session.cwd);
  return submitPlay(store, { label: old.label, spec: { ...playSpec, session: { ...session, plan: session.planned_by === "model" ? null : session.plan }, ...link }, prompt, queue });
}
