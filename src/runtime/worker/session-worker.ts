/**
 * The session supervisor: runs one flow or fan-out in the detached worker process.
 *
 * Every step is a child `invocation` record, created `queued` when execution begins and
 * moved queued → preparing → (its own worker) running when its dependencies have completed
 * and a slot is free. Each step runs in its own process group, so `li kill <session>` (or
 * the play above it) cancels and signals every one of them; this supervisor only decides
 * and records. It polls the store, and stops scheduling the moment its own record is
 * terminal: a killed session starts nothing more.
 *
 * Reason codes written here:
 *   session.running.spawned, session.completed.steps_completed,
 *   session.failed.steps_failed      some step did not complete (failed, timed out, lost, cancelled),
 *   session.failed.synthesis_failed  every step completed but the synthesis did not,
 *   session.failed.planner_failed    the orchestrator's planning run did not complete,
 *   session.failed.invalid_plan      the orchestrator's answer is not a valid plan,
 *   session.failed.internal          the supervisor itself hit an error;
 *   invocation.preparing.dependencies_met, invocation.cancelled.dep_failed,
 *   invocation.failed.spawn_timeout  a step's worker never published running.
 *
 * Artifacts in runs/<session>/: prompt.txt, plan.json, outputs/<step>.txt (each step that
 * ran), synthesis.txt, result.json (per-step status and times), console.log (progress,
 * then the synthesis — or each completed step's output when there is none).
 */
import fs from "node:fs";
import path from "node:path";
import { LiError } from "../../errors.js";
import { ProcSnapshot } from "../../lifecycle/observe.js";
import { writePrivateFile } from "../../lifecycle/paths.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { totalUsage } from "../../lifecycle/usage.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import type { Plan, PlanStep } from "../flow/plan.js";
import { plannerPrompt, stepPrompt, synthesisPrompt, type PriorOutput } from "../flow/prompts.js";
import { finishModelPlan, plannerPool, type SessionSpec } from "../flow/request.js";
import { nextActions, stepState, type StepState } from "../flow/schedule.js";
import { RunEnd } from "./run-end.js";
import { answerOf, readHead as readFileHead } from "./run-output.js";
import { POLL_MS, SessionChildren, Stopped } from "./session-children.js";
import { publishRunning } from "../submit/spawn.js";
import { captureChange, enterIsolation } from "../worktree/worker-side.js";
import { compareFanout } from "../changes/compare.js";

/** How much of one output is read back (into a prompt, or the final console). */
const READ_CAP = 4 * 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The session has been finished by this supervisor already. */
class Finished extends Error {}

export async function run(store: Store, id: string): Promise<void> {
  const session = await publishRunning(store, id, "session", { current_phase: "planning" });
  if (!session) return;
  const end = new RunEnd(store, session);
  let sup: Supervisor;
  try {
    sup = new Supervisor(store, session, end);
  } catch (err: any) {
    end.log(`could not start supervising: ${err?.stack ?? err}`);
    await end.finish("failed", "internal", { detail: { error: String(err?.message ?? err) } });
    return;
  }
  try {
    await sup.enter();
    await sup.run();
  } catch (err: any) {
    if (err instanceof Finished) return;
    if (err instanceof Stopped) {
      sup.log("the session ended outside this supervisor (killed or reaped); scheduling stopped");
      return;
    }
    sup.log(`internal error: ${err?.stack ?? err}`);
    await sup.finish("failed", "internal", { error: String(err?.message ?? err) });
  } finally {
    sup.close();
  }
}

const readHead = (file: string) => readFileHead(file, READ_CAP);

class Supervisor {
  private readonly spec: SessionSpec;
  private readonly dir: string;
  private readonly goal: string;
  private readonly out: number;
  private readonly kids: SessionChildren;

  constructor(
    private readonly store: Store,
    private readonly session: Entity,
    private readonly end: RunEnd,
  ) {
    this.spec = session.spec as unknown as SessionSpec;
    this.dir = session.run_dir!;
    this.goal = fs.readFileSync(path.join(this.dir, "prompt.txt"), "utf8");
    this.out = fs.openSync(path.join(this.dir, "console.log"), "a", 0o600);
    this.kids = new SessionChildren(store, session, this.spec, this.dir, (line) => this.log(line));
  }

  log(line: string): void {
    try {
      fs.writeSync(this.out, `[${this.session.kind} ${this.session.id}] ${line}\n`);
    } catch {}
  }

  private write(text: string): void {
    fs.writeSync(this.out, text);
  }

  close(): void {
    try {
      fs.closeSync(this.out);
    } catch {}
  }

  private async check(): Promise<void> {
    await this.kids.check();
  }

  /** An isolated flow's steps all run in one worktree, the session's, whose change is the flow's. */
  private get worktreeOwner(): boolean {
    return !!this.spec.isolation && this.spec.mode === "flow";
  }

  async enter(): Promise<void> {
    if (!this.worktreeOwner) return;
    const cwd = await enterIsolation(this.store, this.session, this.out, this.end);
    if (cwd === null) throw new Finished();
    this.kids.cwd = cwd;
  }

  private async phase(p: "executing" | "synthesizing"): Promise<void> {
    await this.check();
    await this.store.annotate(this.session.id, { current_phase: p });
  }

  async finish(to: "completed" | "failed", cause: string, detail?: Record<string, unknown>, synthesis?: Entity | null): Promise<void> {
    // What its runs cost together, and the synthesis's answer as the session's own.
    const used = totalUsage((await this.store.children(this.session.id)));
    const answer = synthesis?.status === "completed" ? synthesis.result_text : null;
    if (this.worktreeOwner) await captureChange(this.store, this.session.id, this.out, this.end);
    await this.end.finish(to, cause, { patch: { current_phase: "done", ...(used ? { usage: JSON.stringify(used) } : {}), ...(answer !== null ? { result_text: answer } : {}) }, detail });
  }

  async run(): Promise<void> {
    const plan = await this.plan();
    writePrivateFile(path.join(this.dir, "plan.json"), JSON.stringify({ planned_by: this.spec.planned_by, ...plan }, null, 2) + "\n");
    await this.phase("executing");
    const steps = await this.execute(plan);
    if (this.spec.mode === "fanout") await compareFanout(this.store, this.session.id, (line) => this.log(line));
    const completed = plan.steps.filter((s) => steps.get(s.id)!.status === "completed");
    let synthesis: Entity | null = null;
    if (this.spec.synthesis && completed.length > 0) {
      await this.phase("synthesizing");
      synthesis = await this.synthesize(plan, completed);
    }
    await this.check();

    const allDone = completed.length === plan.steps.length;
    const [to, cause] = !allDone
      ? (["failed", "steps_failed"] as const)
      : this.spec.synthesis && synthesis?.status !== "completed"
        ? (["failed", "synthesis_failed"] as const)
        : (["completed", "steps_completed"] as const);
    const result = {
      id: this.session.id,
      mode: this.spec.mode,
      planned_by: this.spec.planned_by,
      status: to,
      reason_code: `session.${to}.${cause}`,
      steps: plan.steps.map((s) => this.stepSummary(s, steps.get(s.id)!)),
      synthesis: synthesis ? this.summary(synthesis, "synthesis.txt") : null,
    };
    writePrivateFile(path.join(this.dir, "result.json"), JSON.stringify(result, null, 2) + "\n");
    this.log(`${to}: ${completed.length} of ${plan.steps.length} steps completed${synthesis ? `, synthesis ${synthesis.status}` : ""}`);
    this.finalOutput(plan, steps, synthesis);
    await this.finish(to, cause, { steps: plan.steps.length, completed: completed.length }, synthesis);
  }

  private summary(e: Entity, output: string | null) {
    return {
      invocation: e.id,
      model: e.spec.model,
      status: e.status,
      reason_code: e.reason_code,
      started_at: e.started_at,
      ended_at: e.ended_at,
      output: output && fs.existsSync(path.join(this.dir, output)) ? output : null,
    };
  }

  private stepSummary(s: PlanStep, e: Entity) {
    return { id: s.id, role: s.role, depends_on: s.depends_on, ...this.summary(e, `outputs/${s.id}.txt`) };
  }

  private finalOutput(plan: Plan, steps: Map<string, Entity>, synthesis: Entity | null): void {
    if (synthesis?.status === "completed") {
      this.write(`\n=== synthesis (${synthesis.spec.model}) ===\n${readHead(path.join(this.dir, "synthesis.txt"))}\n`);
      return;
    }
    for (const s of plan.steps) {
      if (steps.get(s.id)!.status !== "completed") continue;
      this.write(`\n=== ${s.id}${s.role ? ` (${s.role})` : ""} ===\n${readHead(path.join(this.dir, "outputs", `${s.id}.txt`))}\n`);
    }
  }

  // ---- planning --------------------------------------------------------------------------

  private async plan(): Promise<Plan> {
    if (this.spec.plan) {
      this.log(`plan: ${this.spec.plan.steps.length} steps (${this.spec.planned_by})`);
      return this.spec.plan;
    }
    const model = this.spec.model!;
    this.log(`planning with ${model}`);
    const planner = await this.kids.child({ label: "planner", model, profile: this.spec.profile ?? null, status: "preparing", prompt: plannerPrompt(this.goal, plannerPool(this.spec)), role: "planner" });
    await this.kids.launch(planner);
    const end = await this.kids.waitFor(planner);
    if (end.status !== "completed") {
      this.log(`the planner ${end.id} ended ${end.status} (${end.reason_code})`);
      await this.finish("failed", "planner_failed", { planner: end.id, planner_status: end.status });
      throw new Finished();
    }
    let plan: Plan;
    try {
      plan = await finishModelPlan(answerOf(end, READ_CAP), this.spec, `plan from ${model}`);
    } catch (err: any) {
      if (!(err instanceof LiError)) throw err;
      this.log(`the planner's answer is not a usable plan: ${err.message}`);
      await this.finish("failed", "invalid_plan", { planner: end.id, error: err.message });
      throw new Finished();
    }
    await this.store.annotate(this.session.id, { spec: { plan } });
    this.log(`plan: ${plan.steps.length} steps (planned by ${model})`);
    return plan;
  }

  // ---- execution -------------------------------------------------------------------------

  private async execute(plan: Plan): Promise<Map<string, Entity>> {
    const records = new Map<string, Entity>();
    for (const s of plan.steps) records.set(s.id, (await this.kids.child({ label: s.id, model: s.model!, profile: s.profile ?? null, status: "queued", role: s.role, step: s })));
    const byId = new Map(plan.steps.map((s) => [s.id, s]));
    this.log(`executing ${plan.steps.length} steps, at most ${this.spec.max_concurrent} at a time`);
    const ended = new Set<string>();

    for (;;) {
      await this.check();
      const procs = new ProcSnapshot();
      const states = new Map<string, StepState>();
      for (const [sid, e] of records) {
        const cur = await this.kids.refresh(e, procs);
        records.set(sid, cur);
        states.set(sid, stepState(cur.status));
        if (isTerminal(cur.status) && !ended.has(sid)) {
          ended.add(sid);
          this.kids.keepOutput(cur, path.join("outputs", `${sid}.txt`));
          this.log(`step ${sid} ${cur.status} (${cur.reason_code})`);
        }
      }
      if (ended.size === records.size) return records;

      const actions = nextActions(plan, states, this.spec.max_concurrent);
      for (const c of actions.cancel) {
        const e = records.get(c.id)!;
        await this.check();
        const r = await this.store.transition({
          id: e.id,
          to: "cancelled",
          reason: "invocation.cancelled.dep_failed",
          source: "runtime",
          expect: { status: "queued", version: e.version },
          // The cancel list is in cascade order, so a doomed dependency's own record is already updated.
          detail: { dependency: c.because, dependency_status: records.get(c.because)!.status },
        });
        if (r.ok) records.set(c.id, r.entity);
      }
      for (const sid of actions.start) {
        const step = byId.get(sid)!;
        const prompt =
          this.spec.mode === "fanout"
            ? this.goal
            : stepPrompt(
                step.task,
                this.goal,
                step.depends_on.map((d): PriorOutput => ({ id: d, role: byId.get(d)!.role, text: readHead(path.join(this.dir, "outputs", `${d}.txt`)) })),
              );
        await this.kids.promote(records.get(sid)!, prompt);
      }
      await sleep(POLL_MS);
    }
  }

  private async synthesize(plan: Plan, completed: PlanStep[]): Promise<Entity> {
    const syn = this.spec.synthesis!;
    const outputs = completed.map((s): PriorOutput => ({ id: s.id, role: s.role, text: readHead(path.join(this.dir, "outputs", `${s.id}.txt`)) }));
    this.log(`synthesizing ${completed.length} of ${plan.steps.length} outputs with ${syn.model}`);
    const e = await this.kids.child({ label: "synthesis", model: syn.model, profile: syn.profile ?? this.spec.profile ?? null, status: "preparing", prompt: synthesisPrompt(syn.prompt, this.goal, outputs), role: "synthesis" });
    await this.kids.launch(e);
    const end = await this.kids.waitFor(e);
    this.kids.keepOutput(end, "synthesis.txt");
    this.log(`synthesis ${end.status} (${end.reason_code})`);
    return end;
  }
}
