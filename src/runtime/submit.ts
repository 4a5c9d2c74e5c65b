import path from "node:path";
import type { Entity, Store } from "../lifecycle/store.js";
import { checkCwd, checkPrompt } from "./prompt.js";
import { parseModelSpec, requireAvailable } from "./providers/index.js";
import type { Endpoint } from "../endpoints.js";
import { admission, launch } from "./queue.js";
import { createRecord } from "./spawn.js";

export interface AgentRequest {
  model: string;
  prompt: string;
  cwd?: string;
  timeout_seconds?: number;
  label?: string | null;
  notify?: string[];
  /** Resolved from settings by name (see settings-bridge runEndpoint); null for models that use none. */
  endpoint?: Endpoint | null;
  parent_id?: string | null;
  /** --queue: a named queue from settings (a top-level run joins the default line under max_parallel without one). */
  queue?: string;
}

/** Everything that can be refused is checked here, before any record or directory exists. */
export function validateAgentRequest(req: AgentRequest) {
  const spec = parseModelSpec(req.model);
  const prompt = checkPrompt(req.prompt);
  const cwd = checkCwd(req.cwd);
  requireAvailable(spec, req.endpoint ? { endpoint: req.endpoint } : {});
  return { spec, prompt, cwd };
}

export function agentSpec(req: AgentRequest, cwd: string) {
  return {
    model: req.model,
    cwd,
    timeout_seconds: req.timeout_seconds ?? null,
    notify: req.notify ?? [],
    // The name only: the worker resolves it from settings, so no URL or key variable is recorded.
    endpoint: req.endpoint?.name ?? null,
    prompt_bytes: Buffer.byteLength(req.prompt),
    // Terminal-notify and the endpoint resolve project settings from here, whoever ends or starts the run.
    settings_dir: process.cwd(),
  };
}

/**
 * Validates, records `preparing` (or `queued` under a parallelism limit), snapshots the prompt
 * and starts the detached worker (a queued run's starts when its turn comes: pid null).
 */
export function submitAgent(store: Store, req: AgentRequest, extraSpec: Record<string, unknown> = {}): { entity: Entity; pid: number | null; console_log: string } {
  const { prompt, cwd } = validateAgentRequest(req);
  const queue = req.parent_id ? undefined : admission(req.queue);
  const recorded = createRecord(store, {
    kind: "invocation",
    parent_id: req.parent_id ?? null,
    label: req.label ?? null,
    spec: { ...agentSpec(req, cwd), ...extraSpec },
    prompt,
    queue,
  });
  const { entity, pid } = launch(store, recorded);
  return { entity, pid, console_log: path.join(entity.run_dir!, "console.log") };
}
