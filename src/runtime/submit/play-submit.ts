import type { Entity, Store } from "../../lifecycle/store.js";
import { admission, consoleLogOf, launch, placement } from "../host/queue.js";
import { createRecord } from "./spawn.js";
import { checkPlace } from "../host/host-check.js";
import { requireSessionSandbox, type SessionSpec } from "../flow/request.js";

/** Records a play (`preparing`, or `queued` under a parallelism limit) and starts its worker, which makes its session. */
export async function submitPlay(
  store: Store,
  input: { label: string | null; spec: Record<string, unknown>; prompt: string; queue?: string; host?: string; allowNewHost?: boolean },
): Promise<{ entity: Entity; pid: number | null; console_log: string | null }> {
  const queue = admission(input.queue);
  await checkPlace(store, input.host, input.allowNewHost);
  requireSessionSandbox((input.spec.session ?? {}) as SessionSpec, input.host !== undefined);
  const recorded = await createRecord(store, { kind: "play", label: input.label, spec: input.spec, prompt: input.prompt, queue, ...placement(input.host) });
  const { entity, pid } = await launch(store, recorded);
  return { entity, pid, console_log: consoleLogOf(entity) };
}
