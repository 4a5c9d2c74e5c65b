import { NAME_PATTERN } from "../lifecycle/names.js";
import { closed, fail, number } from "./settings-fields.js";

/*
 * The parallelism limits of settings.yaml:
 *   max_parallel: 3                  # detached runs executing at once, across every queue
 *   queues: {gpu: {max_parallel: 1}} # named queues (li agent --queue gpu), each with its own cap
 * Only the user file may set them: they govern every run of this LI_HOME, not one project's.
 */

export interface QueueSettings {
  /** The cap over all top-level runs; null: no global cap. */
  max_parallel: number | null;
  queues: Record<string, { max_parallel: number }>;
}

/** The largest cap a setting may name: far above what a machine runs, low enough to catch a typo. */
export const MAX_PARALLEL_LIMIT = 1000;

export const NO_LIMITS: QueueSettings = { max_parallel: null, queues: {} };

export function parseQueueSettings(file: string, top: Record<string, unknown>, source: "user" | "project"): QueueSettings | undefined {
  if (top.max_parallel === undefined && top.queues === undefined) return undefined;
  if (source === "project") fail(file, top.max_parallel !== undefined ? "max_parallel" : "queues", "only the user settings file ($LI_HOME/settings.yaml) may set parallelism limits");
  const max_parallel = top.max_parallel === undefined || top.max_parallel === null ? null : number(file, "max_parallel", top.max_parallel, 1, MAX_PARALLEL_LIMIT, true);
  const queues: QueueSettings["queues"] = {};
  if (top.queues !== undefined && top.queues !== null) {
    const q = closed(file, "queues", top.queues, Object.keys(top.queues as object));
    for (const [name, v] of Object.entries(q)) {
      if (!NAME_PATTERN.test(name)) fail(file, `queues.${name}`, "a queue name is 1–64 letters, digits, '.', '_' or '-'");
      const entry = closed(file, `queues.${name}`, v, ["max_parallel"]);
      if (entry.max_parallel === undefined) fail(file, `queues.${name}.max_parallel`, "required: how many runs of this queue may execute at once");
      queues[name] = { max_parallel: number(file, `queues.${name}.max_parallel`, entry.max_parallel, 1, MAX_PARALLEL_LIMIT, true) };
    }
  }
  return { max_parallel, queues };
}
