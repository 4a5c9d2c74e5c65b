/**
 * The flow plan contract: a bounded DAG of steps. Every plan — from --plan-file, a playbook,
 * the mock planner or a real orchestrator's console output — passes `validatePlan` before
 * anything runs, so the executor may assume ids are unique, dependencies exist and there is
 * no cycle.
 */
import { invalid } from "../../errors.js";
import { isObject } from "../../json.js";

export const PLAN_LIMITS = {
  max_steps: 50,
  /** The most steps a session runs at once (--max-concurrent, a playbook's max_concurrent). */
  max_concurrent: 32,
  max_task_bytes: 64 * 1024,
  /** A plan file or a planner's answer larger than this is refused unread. */
  max_plan_bytes: 1024 * 1024,
} as const;

export const STEP_ID = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

export interface PlanStep {
  id: string;
  task: string;
  role: string | null;
  /** provider/model; null means "assign from the worker pool". */
  model: string | null;
  /** A profile from settings (its model is the step's default); null means the session's --profile, if any. */
  profile: string | null;
  depends_on: string[];
}

export interface Plan {
  steps: PlanStep[];
}

const STEP_KEYS = new Set(["id", "task", "role", "model", "profile", "depends_on"]);
const PLAN_KEYS = new Set(["steps", "description"]);


/**
 * Shape, bounds, unknown dependencies and cycles. Unknown keys are refused rather than
 * ignored: a misspelt `depends-on` silently dropped would run steps out of order.
 * `where` prefixes every message (e.g. "plan file x.yaml").
 */
export function validatePlan(raw: unknown, where = "plan"): Plan {
  const fail = (message: string, detail: Record<string, unknown> = {}) => invalid(`${where}: ${message}`, { where, ...detail });
  if (!isObject(raw)) throw fail('must be an object with a "steps" array');
  for (const k of Object.keys(raw)) if (!PLAN_KEYS.has(k)) throw fail(`unknown key ${JSON.stringify(k)} (allowed: steps, description)`, { key: k });
  const rawSteps = raw.steps;
  if (!Array.isArray(rawSteps) || rawSteps.length === 0) throw fail('"steps" must be a non-empty array');
  if (rawSteps.length > PLAN_LIMITS.max_steps)
    throw fail(`has ${rawSteps.length} steps; the limit is ${PLAN_LIMITS.max_steps}`, { steps: rawSteps.length, limit: PLAN_LIMITS.max_steps });

  const steps: PlanStep[] = [];
  const ids = new Set<string>();
  rawSteps.forEach((s, i) => {
    const at = `step ${i + 1}`;
    if (!isObject(s)) throw fail(`${at} must be an object with id and task`);
    for (const k of Object.keys(s))
      if (!STEP_KEYS.has(k)) throw fail(`${at}: unknown key ${JSON.stringify(k)} (allowed: ${[...STEP_KEYS].join(", ")})`, { key: k });
    if (typeof s.id !== "string" || !STEP_ID.test(s.id))
      throw fail(`${at}: id must match ${STEP_ID} (a letter, then letters, digits, _ or -; at most 32)`, { step: s.id ?? null });
    if (ids.has(s.id)) throw fail(`duplicate step id ${JSON.stringify(s.id)}`, { step: s.id });
    ids.add(s.id);
    if (typeof s.task !== "string" || s.task.trim() === "") throw fail(`step ${s.id}: task must be a non-empty string`, { step: s.id });
    if (Buffer.byteLength(s.task) > PLAN_LIMITS.max_task_bytes)
      throw fail(`step ${s.id}: task is over ${PLAN_LIMITS.max_task_bytes} bytes`, { step: s.id });
    if (s.task.includes("\0")) throw fail(`step ${s.id}: task contains a NUL byte`, { step: s.id });
    if (s.role !== undefined && s.role !== null && typeof s.role !== "string") throw fail(`step ${s.id}: role must be a string`, { step: s.id });
    if (s.model !== undefined && s.model !== null && (typeof s.model !== "string" || s.model === ""))
      throw fail(`step ${s.id}: model must be a provider/model string`, { step: s.id });
    if (s.profile !== undefined && s.profile !== null && (typeof s.profile !== "string" || s.profile === ""))
      throw fail(`step ${s.id}: profile must be the name of a profile from settings`, { step: s.id });
    const deps = s.depends_on ?? [];
    if (!Array.isArray(deps) || deps.some((d) => typeof d !== "string"))
      throw fail(`step ${s.id}: depends_on must be an array of step ids`, { step: s.id });
    if (new Set(deps).size !== deps.length) throw fail(`step ${s.id}: depends_on lists a step twice`, { step: s.id });
    if (deps.includes(s.id)) throw fail(`step ${s.id} depends on itself`, { step: s.id, cycle: [s.id, s.id] });
    steps.push({
      id: s.id,
      task: s.task,
      role: (s.role as string | undefined) ?? null,
      model: (s.model as string | undefined) ?? null,
      profile: (s.profile as string | undefined) ?? null,
      depends_on: [...deps],
    });
  });

  for (const s of steps)
    for (const d of s.depends_on)
      if (!ids.has(d))
        throw fail(`step ${s.id} depends on unknown step ${JSON.stringify(d)} (steps: ${[...ids].join(", ")})`, { step: s.id, unknown_dependency: d });

  const cycle = findCycle(steps);
  if (cycle) throw fail(`dependency cycle: ${cycle.join(" -> ")}`, { cycle });
  return { steps };
}

/** One cycle as a closed path (first id repeated at the end), or null for a DAG. */
export function findCycle(steps: readonly PlanStep[]): string[] | null {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  // Iterative DFS: a 50-step chain must not depend on the call stack.
  for (const root of steps) {
    if (state.has(root.id)) continue;
    const frames: { id: string; next: number }[] = [{ id: root.id, next: 0 }];
    state.set(root.id, "visiting");
    stack.push(root.id);
    while (frames.length) {
      const f = frames[frames.length - 1];
      const deps = byId.get(f.id)?.depends_on ?? [];
      if (f.next < deps.length) {
        const d = deps[f.next++];
        const st = state.get(d);
        if (st === "visiting") return [...stack.slice(stack.indexOf(d)), d];
        if (st === undefined && byId.has(d)) {
          state.set(d, "visiting");
          stack.push(d);
          frames.push({ id: d, next: 0 });
        }
      } else {
        state.set(f.id, "done");
        stack.pop();
        frames.pop();
      }
    }
  }
  return null;
}

/** Plan order constrained by dependencies (Kahn, ties broken by position): the order a single slot runs them. */
export function topologicalOrder(plan: Plan): string[] {
  const remaining = new Map(plan.steps.map((s) => [s.id, new Set(s.depends_on)]));
  const out: string[] = [];
  while (remaining.size) {
    const ready = plan.steps.find((s) => remaining.has(s.id) && remaining.get(s.id)!.size === 0);
    if (!ready) throw new Error("topologicalOrder: cycle (validatePlan admits none)");
    out.push(ready.id);
    remaining.delete(ready.id);
    for (const deps of remaining.values()) deps.delete(ready.id);
  }
  return out;
}

/**
 * A planner's console output as a plan: the whole text as JSON, else the first fenced
 * ```json block, else the span from the first "{" to the last "}". Models wrap JSON in
 * prose or fences often enough that refusing those would fail real plans for no benefit.
 */
export function parsePlanText(text: string, where = "planner output"): Plan {
  if (Buffer.byteLength(text) > PLAN_LIMITS.max_plan_bytes) throw invalid(`${where}: over ${PLAN_LIMITS.max_plan_bytes} bytes`, { where });
  const candidates: string[] = [text.trim()];
  const fence = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text);
  if (fence) candidates.push(fence[1].trim());
  const a = text.indexOf("{");
  const b = text.lastIndexOf("}");
  if (a >= 0 && b > a) candidates.push(text.slice(a, b + 1));
  for (const c of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(c);
    } catch {
      continue;
    }
    return validatePlan(parsed, where);
  }
  throw invalid(`${where}: no JSON plan found (expected {"steps": [...]})`, { where, head: text.slice(0, 200) });
}
