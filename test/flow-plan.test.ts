/**
 * The pure half of flows: plan validation (bounds, unknown dependencies, cycles), the
 * planner-output parser, the scheduling decision and the mock planner. No processes.
 */
import { mockPlan } from "../src/runtime/flow/mock-planner.js";
import { findCycle, parsePlanText, PLAN_LIMITS, topologicalOrder, validatePlan, type Plan } from "../src/runtime/flow/plan.js";
import { stepPrompt } from "../src/runtime/flow/prompts.js";
import { assignModels, fanoutPlan, splitModels } from "../src/runtime/flow/request.js";
import { nextActions, stepState, type StepState } from "../src/runtime/flow/schedule.js";
import { refusal } from "./helpers/refusal.js";

const diamond = {
  steps: [
    { id: "a", task: "first" },
    { id: "b", task: "left", depends_on: ["a"] },
    { id: "c", task: "right", depends_on: ["a"] },
    { id: "d", task: "join", depends_on: ["b", "c"] },
  ],
};

describe("validatePlan", () => {
  test("accepts a diamond and normalises absent fields", () => {
    const plan = validatePlan(diamond);
    expect(plan.steps[0]).toEqual({ id: "a", task: "first", role: null, model: null, profile: null, depends_on: [] });
    expect(topologicalOrder(plan)).toEqual(["a", "b", "c", "d"]);
  });

  test("names an unknown dependency and the step that has it", () => {
    const m = refusal(() => validatePlan({ steps: [{ id: "a", task: "t", depends_on: ["ghost"] }] }, "plan file p.yaml"));
    expect(m).toBe('plan file p.yaml: step a depends on unknown step "ghost" (steps: a)');
  });

  test("reports a cycle as a closed path", () => {
    const m = refusal(() =>
      validatePlan({
        steps: [
          { id: "a", task: "t" },
          { id: "b", task: "t", depends_on: ["d"] },
          { id: "c", task: "t", depends_on: ["b"] },
          { id: "d", task: "t", depends_on: ["c", "a"] },
        ],
      }),
    );
    expect(m).toMatch(/dependency cycle: (b -> d -> c -> b|d -> c -> b -> d|c -> b -> d -> c)$/);
    expect(refusal(() => validatePlan({ steps: [{ id: "a", task: "t", depends_on: ["a"] }] }))).toMatch(/step a depends on itself/);
  });

  test("bounds the size and refuses malformed steps", () => {
    const many = { steps: Array.from({ length: PLAN_LIMITS.max_steps + 1 }, (_, i) => ({ id: `s${i}`, task: "t" })) };
    expect(refusal(() => validatePlan(many))).toMatch(/has 51 steps; the limit is 50/);
    expect(refusal(() => validatePlan({ steps: [] }))).toMatch(/non-empty array/);
    expect(refusal(() => validatePlan([]))).toMatch(/must be an object/);
    expect(refusal(() => validatePlan({ steps: [{ id: "a", task: "t" }, { id: "a", task: "u" }] }))).toMatch(/duplicate step id "a"/);
    expect(refusal(() => validatePlan({ steps: [{ id: "1x", task: "t" }] }))).toMatch(/id must match/);
    expect(refusal(() => validatePlan({ steps: [{ id: "a", task: "  " }] }))).toMatch(/task must be a non-empty string/);
    expect(refusal(() => validatePlan({ steps: [{ id: "a", task: "t", "depends-on": ["b"] }] }))).toMatch(/unknown key "depends-on"/);
    expect(refusal(() => validatePlan({ steps: [{ id: "a", task: "x".repeat(PLAN_LIMITS.max_task_bytes + 1) }] }))).toMatch(/task is over/);
  });

  test("a 50-step chain validates without deep recursion, and findCycle sees the back edge", () => {
    const chain = { steps: Array.from({ length: 50 }, (_, i) => ({ id: `s${i}`, task: "t", depends_on: i ? [`s${i - 1}`] : [] })) };
    expect(topologicalOrder(validatePlan(chain))).toHaveLength(50);
    const steps = validatePlan(chain).steps;
    steps[0].depends_on = ["s49"];
    expect(findCycle(steps)?.length).toBe(51);
  });
});

describe("parsePlanText (the orchestrator's console output)", () => {
  const json = JSON.stringify(diamond);
  test("bare JSON, a fenced block, or JSON inside prose", () => {
    expect(parsePlanText(json).steps).toHaveLength(4);
    expect(parsePlanText("Here you go:\n```json\n" + json + "\n```\nGood luck").steps).toHaveLength(4);
    expect(parsePlanText("Plan: " + json + " done.").steps).toHaveLength(4);
  });
  test("no JSON, or JSON that is not a valid plan, is refused the same way as a file", () => {
    expect(refusal(() => parsePlanText("I cannot plan this"))).toMatch(/no JSON plan found/);
    expect(refusal(() => parsePlanText('{"steps":[{"id":"a","task":"t","depends_on":["a"]}]}'))).toMatch(/depends on itself/);
  });
});

describe("nextActions", () => {
  const plan = validatePlan(diamond);
  const states = (o: Record<string, StepState>) => new Map(Object.entries({ a: "pending", b: "pending", c: "pending", d: "pending", ...o }) as [string, StepState][]);

  test("starts only steps whose dependencies completed, within the free slots, in plan order", () => {
    expect(nextActions(plan, states({}), 4)).toEqual({ cancel: [], start: ["a"], done: false });
    expect(nextActions(plan, states({ a: "completed" }), 1).start).toEqual(["b"]);
    expect(nextActions(plan, states({ a: "completed" }), 2).start).toEqual(["b", "c"]);
    expect(nextActions(plan, states({ a: "completed", b: "active" }), 1).start).toEqual([]);
    expect(nextActions(plan, states({ a: "completed", b: "completed", c: "active" }), 4).start).toEqual([]);
    expect(nextActions(plan, states({ a: "completed", b: "completed", c: "completed" }), 4).start).toEqual(["d"]);
  });

  test("a failure cancels its dependents transitively and nothing else", () => {
    const wide = validatePlan({
      steps: [
        { id: "a", task: "t" },
        { id: "b", task: "t", depends_on: ["a"] },
        { id: "c", task: "t", depends_on: ["b"] },
        { id: "d", task: "t", depends_on: ["c"] },
        { id: "e", task: "t", depends_on: ["a"] },
        { id: "f", task: "t" },
      ],
    });
    const s = new Map<string, StepState>([
      ["a", "completed"],
      ["b", "failed"],
      ["c", "pending"],
      ["d", "pending"],
      ["e", "pending"],
      ["f", "active"],
    ]);
    const r = nextActions(wide, s, 4);
    expect(r.cancel).toEqual([
      { id: "c", because: "b" },
      { id: "d", because: "c" },
    ]);
    expect(r.start).toEqual(["e"]);
    expect(r.done).toBe(false);
    expect(nextActions(plan, states({ a: "cancelled" }), 4)).toEqual({
      cancel: [
        { id: "b", because: "a" },
        { id: "c", because: "a" },
        { id: "d", because: "b" },
      ],
      start: [],
      done: true,
    });
  });

  test("maps lifecycle statuses", () => {
    expect(["queued", "preparing", "running", "completed", "failed", "timed_out", "lost", "cancelled"].map(stepState)).toEqual([
      "pending",
      "active",
      "active",
      "completed",
      "failed",
      "failed",
      "failed",
      "cancelled",
    ]);
  });
});

describe("the mock planner", () => {
  test("bullets become steps, with (after …) dependencies and @model assignments", () => {
    const prompt = "Build it:\n- gather facts @mock/sleep:0.1\n  * draft the text (after s1)\n- check it @mock/fail:3 (after s1, s2)\nthanks";
    const plan = mockPlan(prompt);
    expect(plan).toEqual({
      steps: [
        { id: "s1", task: "gather facts", depends_on: [], model: "mock/sleep:0.1" },
        { id: "s2", task: "draft the text", depends_on: ["s1"] },
        { id: "s3", task: "check it", depends_on: ["s1", "s2"], model: "mock/fail:3" },
      ],
    });
    expect(mockPlan(prompt)).toEqual(plan);
    expect(validatePlan(plan).steps).toHaveLength(3);
  });

  test("a prompt without bullets plans the fixed diamond", () => {
    const plan = validatePlan(mockPlan("write a haiku"));
    expect(plan.steps.map((s) => [s.id, s.depends_on])).toEqual([
      ["s1", []],
      ["s2", ["s1"]],
      ["s3", ["s1"]],
      ["s4", ["s2", "s3"]],
    ]);
  });

  test("a mock plan with a bad reference is refused like any plan", () => {
    expect(refusal(() => validatePlan(mockPlan("- a (after s2)\n- b (after s1)")))).toMatch(/dependency cycle/);
    expect(refusal(() => validatePlan(mockPlan("- a (after s9)")))).toMatch(/unknown step "s9"/);
  });
});

describe("model assignment and prompts", () => {
  test("round-robin over the pool by position; a step's own model wins; no model is an error", () => {
    const plan: Plan = validatePlan({ steps: [{ id: "a", task: "t" }, { id: "b", task: "t", model: "mock/hang" }, { id: "c", task: "t" }] });
    expect(assignModels(plan, ["mock/echo", "mock/sleep:1"], null).steps.map((s) => s.model)).toEqual(["mock/echo", "mock/hang", "mock/echo"]);
    expect(assignModels(plan, [], "mock/echo").steps.map((s) => s.model)).toEqual(["mock/echo", "mock/hang", "mock/echo"]);
    expect(refusal(() => assignModels(validatePlan({ steps: [{ id: "a", task: "t" }] }), [], null))).toMatch(/step a has no model/);
    expect(refusal(() => assignModels(plan, [], "mock/echo", new Set(["mock/echo"])))).toMatch(/not in the worker pool/);
    expect(fanoutPlan(3, ["m/1", "m/2"], null).steps.map((s) => [s.id, s.model])).toEqual([
      ["w1", "m/1"],
      ["w2", "m/2"],
      ["w3", "m/1"],
    ]);
    expect(splitModels(["a/b, c/d", "e/f"])).toEqual(["a/b", "c/d", "e/f"]);
  });

  test("a step's prompt carries its task, the goal and each dependency's output", () => {
    const p = stepPrompt("join them", "the goal", [
      { id: "b", role: "left", text: "LEFT OUT" },
      { id: "c", role: null, text: "RIGHT OUT" },
    ]);
    expect(p.startsWith("join them\n")).toBe(true);
    expect(p).toContain("the goal");
    expect(p).toContain("--- output of step b (left) ---\nLEFT OUT");
    expect(p).toContain("--- output of step c ---\nRIGHT OUT");
  });
});
