import { PROMPT_CAP_BYTES } from "../submit/prompt.js";
import { PLAN_LIMITS } from "./plan.js";

/** The orchestrator's brief: the JSON plan contract that parsePlanText/validatePlan enforce. */
export function plannerPrompt(goal: string, pool: string[]): string {
  return [
    "You are the orchestrator of a multi-step agent flow. Plan a small DAG of steps that together accomplish the goal below.",
    "Answer with ONLY one JSON object, no prose and no code fence, of exactly this shape:",
    '{"steps": [{"id": "s1", "task": "what this step must do", "role": "short role name", "model": "provider/model", "depends_on": []}]}',
    "Rules:",
    `- at most ${PLAN_LIMITS.max_steps} steps; ids start with a letter and use only letters, digits, _ and -;`,
    "- depends_on lists the ids whose outputs the step needs; each step receives those outputs; no cycles;",
    "- steps without dependencies run in parallel;",
    `- "model" is optional; when given it must be one of: ${pool.join(", ")}. Omit it to assign workers round-robin;`,
    '- no keys other than id, task, role, model, depends_on (and "steps" at the top).',
    "",
    "Goal:",
    goal,
  ].join("\n");
}

export interface PriorOutput {
  id: string;
  role: string | null;
  text: string;
}

/**
 * Fits outputs into what is left of the prompt cap, each truncated to an equal share, so a
 * verbose dependency cannot push the step's prompt over the cap and fail it.
 */
function section(outputs: PriorOutput[], budget: number, title: (o: PriorOutput) => string): string {
  if (outputs.length === 0) return "";
  const share = Math.max(1024, Math.floor(budget / outputs.length));
  return outputs
    .map((o) => {
      const buf = Buffer.from(o.text);
      const body = buf.length > share ? `${buf.subarray(0, share).toString("utf8")}\n[… truncated: ${buf.length - share} of ${buf.length} bytes omitted]` : o.text;
      return `\n\n--- ${title(o)} ---\n${body}`;
    })
    .join("");
}

const HEADROOM = 64 * 1024;

export function stepPrompt(task: string, goal: string, deps: PriorOutput[]): string {
  const head = `${task}\n\nThis is one step of a larger task. The overall goal:\n${goal}`;
  const budget = PROMPT_CAP_BYTES - Buffer.byteLength(head) - HEADROOM;
  const inputs = deps.length ? `\n\nOutputs of the steps this one depends on:${section(deps, budget, (o) => `output of step ${o.id}${o.role ? ` (${o.role})` : ""}`)}` : "";
  return head + inputs;
}

export const DEFAULT_SYNTHESIS_PROMPT = "Synthesize the outputs below into one complete, consistent answer to the original request.";

export function synthesisPrompt(instruction: string | null, goal: string, outputs: PriorOutput[]): string {
  const head = `${instruction ?? DEFAULT_SYNTHESIS_PROMPT}\n\nOriginal request:\n${goal}`;
  const budget = PROMPT_CAP_BYTES - Buffer.byteLength(head) - HEADROOM;
  return head + section(outputs, budget, (o) => `output of ${o.id}${o.role ? ` (${o.role})` : ""}`);
}
