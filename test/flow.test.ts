/**
 * li o flow / li o fanout end to end on the offline mock provider: dependency order and the
 * concurrency limit from the recorded start/end times, dep_failed cancellation of exactly
 * the dependents, fan-out with synthesis and its artifacts, refusals before any record,
 * and a real provider (openai, against a local stub) planning through the JSON contract.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { entityRows, events, useHomes } from "./helpers/fixtures.js";
import { type Home, li, liData, until } from "./helpers/li.js";

const home = useHomes();

interface Row {
  id: string;
  kind: string;
  parent_id: string | null;
  label: string | null;
  status: string;
  reason_code: string | null;
  started_at: string | null;
  ended_at: string | null;
  current_phase: string | null;
  pid: number | null;
  spec: string;
}

/** Reads state.db directly: fast enough to poll, and no reaping side effects. */
const rows = (h: Home): Promise<Row[]> => entityRows<Row>(h);

/** Polls the session until it ends, collecting each distinct current_phase in the order seen. */
async function watchPhases(h: Home, id: string): Promise<{ end: Row; phases: string[] }> {
  const phases: string[] = [];
  const end = await until<Row | undefined>(
    async () => {
      const s = (await rows(h)).find((r) => r.id === id);
      if (s?.current_phase && phases[phases.length - 1] !== s.current_phase) phases.push(s.current_phase);
      return s && ["completed", "failed", "cancelled", "lost"].includes(s.status) ? s : undefined;
    },
    30000,
    25,
  );
  return { end: end!, phases };
}

const steps = async (h: Home, session: string) => Object.fromEntries((await rows(h)).filter((r) => r.parent_id === session && r.label !== "synthesis" && r.label !== "planner").map((r) => [r.label!, r]));
const t = (iso: string | null) => Date.parse(iso!);

/** The most intervals [started_at, ended_at) open at one instant. */
function maxOverlap(rs: Row[]): number {
  const points = rs.flatMap((r) => [
    [t(r.started_at), 1],
    [t(r.ended_at), -1],
  ]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of points) most = Math.max(most, (open += d));
  return most;
}

function writePlan(h: Home, name: string, plan: unknown): string {
  const file = path.join(h.home, name);
  fs.writeFileSync(file, name.endsWith(".json") ? JSON.stringify(plan) : toYaml(plan as any));
  return file;
}

/** Just enough YAML for a plan (flow mappings), so the YAML path of --plan-file is exercised. */
function toYaml(plan: { steps: Record<string, unknown>[] }): string {
  return "steps:\n" + plan.steps.map((s) => `  - ${JSON.stringify(s)}`).join("\n") + "\n";
}

describe("li o flow", () => {
  test("a diamond runs in dependency order, one at a time under --max-concurrent 1", async () => {
    const h = home();
    const plan = writePlan(h, "diamond.yaml", {
      steps: [
        { id: "a", task: "first", model: "mock/sleep:0.2" },
        { id: "b", task: "left", depends_on: ["a"] },
        { id: "c", task: "right", depends_on: ["a"] },
        { id: "d", task: "join", depends_on: ["b", "c"] },
      ],
    });
    const r = await li(["--machine", "o", "flow", "--plan-file", plan, "--workers", "mock/sleep:0.2", "--max-concurrent", "1", "build the thing"], { env: h.env });
    expect(r.code).toBe(0);
    const data = r.json.data;
    expect(data).toMatchObject({ kind: "session", status: "completed", reason_code: "session.completed.steps_completed", current_phase: "done" });

    const s = (await steps(h, data.id));
    expect(Object.keys(s).sort()).toEqual(["a", "b", "c", "d"]);
    for (const r of Object.values(s)) expect(r).toMatchObject({ kind: "invocation", status: "completed" });
    // Dependency order from the recorded times: nothing starts before its dependencies ended.
    expect(t(s.b.started_at)).toBeGreaterThanOrEqual(t(s.a.ended_at));
    expect(t(s.c.started_at)).toBeGreaterThanOrEqual(t(s.a.ended_at));
    expect(t(s.d.started_at)).toBeGreaterThanOrEqual(Math.max(t(s.b.ended_at), t(s.c.ended_at)));
    // b and c were both ready together; the limit kept them apart.
    expect(maxOverlap(Object.values(s))).toBe(1);

    // Each step was queued first, then moved by the supervisor, then ran.
    expect((await events(h, s.d.id)).map((e) => [e.from_status, e.to_status, e.reason_code])).toEqual([
      ["queued", "preparing", "invocation.preparing.dependencies_met"],
      ["preparing", "running", "invocation.running.spawned"],
      ["running", "completed", "invocation.completed.exit_zero"],
    ]);

    // The join's prompt carried both dependencies' outputs (mock/sleep echoes its prompt).
    const dir = data.run_dir;
    const joined = fs.readFileSync(path.join(dir, "outputs", "d.txt"), "utf8");
    expect(joined).toContain("--- output of step b ---\nleft");
    expect(joined).toContain("--- output of step c ---\nright");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "plan.json"), "utf8")).steps.map((x: any) => x.model)).toEqual(["mock/sleep:0.2", "mock/sleep:0.2", "mock/sleep:0.2", "mock/sleep:0.2"]);
    const result = JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8"));
    expect(result.steps.map((x: any) => [x.id, x.status, x.output])).toEqual([
      ["a", "completed", "outputs/a.txt"],
      ["b", "completed", "outputs/b.txt"],
      ["c", "completed", "outputs/c.txt"],
      ["d", "completed", "outputs/d.txt"],
    ]);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, "outputs")).mode & 0o777).toBe(0o700);
    for (const f of ["plan.json", "result.json", "prompt.txt", "console.log", "outputs/d.txt"]) expect(fs.statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
  });

  test("a failing step cancels its dependents (dep_failed) and only them; the rest run", async () => {
    const h = home();
    const plan = writePlan(h, "fail.json", {
      steps: [
        { id: "a", task: "root" },
        { id: "bad", task: "breaks", model: "mock/fail:3", depends_on: ["a"] },
        { id: "child", task: "needs bad", depends_on: ["bad"] },
        { id: "grandchild", task: "needs child", depends_on: ["child", "a"] },
        { id: "sibling", task: "needs a only", depends_on: ["a"] },
        { id: "loner", task: "needs nothing" },
      ],
    });
    const r = await li(["--machine", "o", "flow", "--plan-file", plan, "--model", "mock/echo", "the goal"], { env: h.env });
    expect(r.code).toBe(0); // --machine: an ok result exits 0; the data says it failed
    expect(r.json.data).toMatchObject({ status: "failed", outcome: "failed", reason_code: "session.failed.steps_failed", current_phase: "done" });
    const s = (await steps(h, r.json.data.id));
    expect(Object.fromEntries(Object.entries(s).map(([k, v]) => [k, [v.status, v.reason_code]]))).toEqual({
      a: ["completed", "invocation.completed.exit_zero"],
      bad: ["failed", "invocation.failed.exit_nonzero"],
      child: ["cancelled", "invocation.cancelled.dep_failed"],
      grandchild: ["cancelled", "invocation.cancelled.dep_failed"],
      sibling: ["completed", "invocation.completed.exit_zero"],
      loner: ["completed", "invocation.completed.exit_zero"],
    });
    // The cancelled ones never started a process.
    expect(s.child.pid).toBeNull();
    expect(s.grandchild.started_at).toBeNull();
    expect((await events(h, s.child.id))).toEqual([expect.objectContaining({ from_status: "queued", to_status: "cancelled", reason_code: "invocation.cancelled.dep_failed", source: "runtime" })]);
    // Transitive: the grandchild names the dependency that doomed it.
    expect(JSON.parse((await events(h, s.grandchild.id))[0].detail!)).toEqual({ dependency: "child", dependency_status: "cancelled" });
    // The failed step's output is kept too (mock/fail writes the prompt to stderr).
    expect(fs.readFileSync(path.join(r.json.data.run_dir, "outputs", "bad.txt"), "utf8")).toContain("breaks");
  });

  test("the mock orchestrator plans the prompt's bullets; --dry-run shows that plan and writes nothing", async () => {
    const h = home();
    const prompt = "- collect @mock/echo\n- write (after s1)\n- check (after s1, s2)";
    const dry = await liData(["o", "flow", "--model", "mock/echo", "--workers", "mock/sleep:0", "--dry-run", "--", prompt], { env: h.env });
    expect(dry).toMatchObject({ dry_run: true, planned_by: "mock", mode: "flow" });
    expect(dry.steps.map((s: any) => [s.id, s.task, s.model, s.depends_on])).toEqual([
      ["s1", "collect", "mock/echo", []],
      ["s2", "write", "mock/sleep:0", ["s1"]],
      ["s3", "check", "mock/sleep:0", ["s1", "s2"]],
    ]);
    expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(false);
    expect(fs.existsSync(path.join(h.home, "runs"))).toBe(false);

    const ran = await liData(["o", "flow", "--model", "mock/echo", "--workers", "mock/sleep:0", "--", prompt], { env: h.env });
    expect(ran.status).toBe("completed");
    expect(ran.steps.map((s: any) => [s.id, s.model])).toEqual([
      ["s1", "mock/echo"],
      ["s2", "mock/sleep:0"],
      ["s3", "mock/sleep:0"],
    ]);
  });

  test.each([
    ["a cycle in --plan-file", ["--plan-file", "CYCLE", "goal"], /dependency cycle: a -> b -> a/],
    ["an unknown dependency", ["--plan-file", "UNKNOWN", "goal"], /step a depends on unknown step "zz"/],
    ["an unknown provider for a step", ["--plan-file", "BADMODEL", "goal"], /unknown provider "nope"/],
    ["an unknown orchestrator provider", ["--model", "nope/x", "goal"], /unknown provider "nope"/],
    ["an empty prompt", ["--model", "mock/echo", "  "], /the prompt is empty/],
    ["a mock plan with a cycle", ["--model", "mock/echo", "--", "- a (after s2)\n- b (after s1)"], /dependency cycle/],
    ["neither --model nor --plan-file", ["goal"], /give --model/],
    ["an unknown --notify handler", ["--notify", "nosuch", "--model", "mock/echo", "goal"], /--notify nosuch/],
  ])("%s is refused before any record or run directory exists", async (_what, args, pattern) => {
    const h = home();
    const files: Record<string, string> = {
      CYCLE: writePlan(h, "cycle.yaml", { steps: [{ id: "a", task: "x", depends_on: ["b"] }, { id: "b", task: "y", depends_on: ["a"] }] }),
      UNKNOWN: writePlan(h, "unknown.json", { steps: [{ id: "a", task: "x", depends_on: ["zz"] }] }),
      BADMODEL: writePlan(h, "badmodel.json", { steps: [{ id: "a", task: "x", model: "nope/x" }] }),
    };
    const r = await li(["--machine", "o", "flow", ...(args as string[]).map((a) => files[a] ?? a)], { env: h.env });
    expect(r.code).toBe(2);
    expect(r.json.error.kind).toBe("invalid_input");
    expect(r.json.error.message).toMatch(pattern);
    expect((await rows(h))).toEqual([]);
    expect(fs.existsSync(path.join(h.home, "runs")) ? fs.readdirSync(path.join(h.home, "runs")) : []).toEqual([]);
  });
});

describe("li o fanout", () => {
  test("3 workers round-robin, then a synthesis over their outputs; phases executing → synthesizing → done", async () => {
    const h = home();
    const sub = await liData(["o", "fanout", "-n", "3", "--workers", "mock/sleep:0.7,mock/sleep:0.8", "--synthesis-model", "mock/sleep:0.6", "--synthesis-prompt", "MERGE THEM", "--detach", "name a colour"], { env: h.env });
    expect(sub).toMatchObject({ kind: "session", status: "preparing" });
    const { end, phases } = await watchPhases(h, sub.id);
    expect(end).toMatchObject({ status: "completed", reason_code: "session.completed.steps_completed", current_phase: "done" });
    // A fan-out has nothing to plan, so "planning" may pass too fast to be seen.
    expect(phases.filter((p) => p !== "planning")).toEqual(["executing", "synthesizing", "done"]);

    const kids = (await rows(h)).filter((r) => r.parent_id === sub.id);
    expect(kids.map((k) => [k.label, JSON.parse(k.spec).model, k.status])).toEqual([
      ["w1", "mock/sleep:0.7", "completed"],
      ["w2", "mock/sleep:0.8", "completed"],
      ["w3", "mock/sleep:0.7", "completed"],
      ["synthesis", "mock/sleep:0.6", "completed"],
    ]);
    const workers = kids.filter((k) => k.label !== "synthesis");
    // All three ran at once (the default limit is 4), and the synthesis only after all of them.
    expect(maxOverlap(workers)).toBe(3);
    const syn = kids.find((k) => k.label === "synthesis")!;
    expect(t(syn.started_at)).toBeGreaterThanOrEqual(Math.max(...workers.map((w) => t(w.ended_at))));

    const dir = sub.run_dir;
    // Each worker got the prompt exactly as given.
    for (const w of ["w1", "w2", "w3"]) expect(fs.readFileSync(path.join(dir, "outputs", `${w}.txt`), "utf8")).toBe("name a colour");
    const synthesis = fs.readFileSync(path.join(dir, "synthesis.txt"), "utf8");
    expect(synthesis.startsWith("MERGE THEM\n")).toBe(true);
    for (const w of ["w1", "w2", "w3"]) expect(synthesis).toContain(`--- output of ${w} (worker) ---\nname a colour`);
    const out = await liData(["job", "output", sub.id], { env: h.env });
    expect(out.output).toContain(`=== synthesis (mock/sleep:0.6) ===\n${synthesis}`);
  });

  test("--max-concurrent 2 caps 4 parallel workers at exactly 2 at a time", async () => {
    const h = home();
    const data = await liData(["o", "fanout", "-n", "4", "--model", "mock/sleep:0.5", "--max-concurrent", "2", "hello"], { env: h.env });
    expect(data.status).toBe("completed");
    expect(maxOverlap(Object.values((await steps(h, data.id))))).toBe(2);
  });
});

describe("a real provider plans through the JSON contract", () => {
  let server: http.Server;
  let answer = "";
  let delayMs = 0;
  let baseUrl = "";
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        setTimeout(() => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ choices: [{ message: { content: answer } }] }));
        }, delayMs),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test("its console output is parsed as the plan (fences tolerated) and the steps run", async () => {
    const h = home();
    const env = { ...h.env, OPENAI_BASE_URL: baseUrl };
    answer = 'Sure.\n```json\n{"steps": [{"id": "x", "task": "do x"}, {"id": "y", "task": "do y", "depends_on": ["x"], "model": "mock/echo"}]}\n```';
    // A slow planner, so the planning phase is observable.
    delayMs = 700;
    const data = await liData(["o", "flow", "--model", "openai/planner-1", "--workers", "mock/echo", "--detach", "plan me"], { env });
    const { end, phases } = await watchPhases(h, data.id);
    delayMs = 0;
    expect(end).toMatchObject({ status: "completed", current_phase: "done" });
    expect(phases).toEqual(["planning", "executing", "done"]);
    const kids = (await rows(h)).filter((r) => r.parent_id === data.id);
    expect(kids.map((k) => [k.label, JSON.parse(k.spec).model, k.status])).toEqual([
      ["planner", "openai/planner-1", "completed"],
      ["x", "mock/echo", "completed"],
      ["y", "mock/echo", "completed"],
    ]);
    const plan = JSON.parse(fs.readFileSync(path.join(data.run_dir, "plan.json"), "utf8"));
    expect(plan).toMatchObject({ planned_by: "model", steps: [{ id: "x" }, { id: "y", depends_on: ["x"] }] });

    // The same answer, asked for with --dry-run, is planned in the foreground and nothing is recorded.
    const before = (await rows(h)).length;
    const dry = await liData(["o", "flow", "--model", "openai/planner-1", "--workers", "mock/echo", "--dry-run", "plan me"], { env });
    expect(dry.steps.map((s: any) => s.id)).toEqual(["x", "y"]);
    expect((await rows(h)).length).toBe(before);
  });

  test("an answer that is not a valid plan fails the session as invalid_plan, running no step", async () => {
    const h = home();
    const env = { ...h.env, OPENAI_BASE_URL: baseUrl };
    answer = '{"steps": [{"id": "x", "task": "t", "depends_on": ["x"]}]}';
    const r = await li(["--machine", "o", "flow", "--model", "openai/planner-1", "--workers", "mock/echo", "plan me"], { env });
    expect(r.code).toBe(0); // --machine: an ok result exits 0; the data says it failed
    expect(r.json.data).toMatchObject({ status: "failed", reason_code: "session.failed.invalid_plan" });
    expect((await rows(h)).filter((k) => k.parent_id === r.json.data.id).map((k) => k.label)).toEqual(["planner"]);
  });
});
