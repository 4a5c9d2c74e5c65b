/**
 * How the offline `mock` orchestrator plans, so flows run end to end without a model. The
 * rule is deterministic and depends only on the prompt text:
 *
 * 1. Every prompt line starting with "- " or "* " (after optional indentation) is one step,
 *    with ids s1, s2, … in order. In the line:
 *      - a trailing "(after s1, s3)" makes the step depend on those steps;
 *      - an "@provider/model" word assigns that step's model (e.g. "@mock/fail:3");
 *      - the rest is the step's task.
 * 2. A prompt with no such line gets the fixed diamond:
 *      s1 analyse → s2 first half, s3 second half (both after s1) → s4 combine (after s2, s3).
 *
 * Steps without an @model take models from the worker pool round-robin (--workers), else the
 * orchestrator's own model. The result is validated like any other plan, so "(after s9)" for
 * a missing step or a cycle is refused before anything runs.
 */
export function mockPlan(prompt: string): { steps: Record<string, unknown>[] } {
  const bullets = prompt
    .split(/\r?\n/)
    .map((l) => /^\s*[-*]\s+(.*\S)\s*$/.exec(l)?.[1])
    .filter((l): l is string => l !== undefined);
  if (bullets.length === 0) return { steps: DIAMOND.map((s) => ({ ...s, depends_on: [...s.depends_on] })) };
  return {
    steps: bullets.map((line, i) => {
      let rest = line;
      let depends_on: string[] = [];
      const after = /\(\s*after\s+([^)]*)\)\s*$/i.exec(rest);
      if (after) {
        depends_on = after[1].split(/[\s,]+/).filter(Boolean);
        rest = rest.slice(0, after.index);
      }
      let model: string | null = null;
      rest = rest.replace(/(^|\s)@([A-Za-z0-9_-]+\/\S+)/, (_m, lead: string, spec: string) => {
        model = spec;
        return lead;
      });
      const step: Record<string, unknown> = { id: `s${i + 1}`, task: rest.replace(/\s+/g, " ").trim() || line, depends_on };
      if (model) step.model = model;
      return step;
    }),
  };
}

const DIAMOND = [
  { id: "s1", role: "analyst", task: "Analyse the request: list its parts and what a complete answer needs.", depends_on: [] as string[] },
  { id: "s2", role: "worker", task: "Work out the first half of the parts in detail.", depends_on: ["s1"] },
  { id: "s3", role: "worker", task: "Work out the second half of the parts in detail.", depends_on: ["s1"] },
  { id: "s4", role: "editor", task: "Combine the two halves into one complete answer.", depends_on: ["s2", "s3"] },
];
