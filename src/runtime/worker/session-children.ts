import path from "node:path";
import { LiError } from "../../errors.js";
import { observe, ProcSnapshot } from "../../lifecycle/observe.js";
import { writePrivateFile } from "../../lifecycle/paths.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import type { PlanStep } from "../flow/plan.js";
import type { SessionSpec } from "../flow/request.js";
import { keepAnswer } from "./run-output.js";
import { usesEndpoint } from "../submit/settings-bridge.js";
import { createRecord, startWorker } from "../submit/spawn.js";
import { freshIsolation } from "../worktree/isolation.js";
import { routeLacking } from "../approvals/support.js";
import { parseModelSpec } from "../providers/index.js";

/*
 * A session's child runs (planner, steps, synthesis) as its supervisor creates, starts, watches
 * and keeps them: every write is fenced on the session's own record still being open.
 */

export const POLL_MS = 100;
/** A step whose worker has not published `running` by then is failed rather than waited on forever. */
const SPAWN_DEADLINE_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The session record went terminal under us (killed, reaped): stop, write nothing more. */
export class Stopped extends Error {}

export class SessionChildren {
  /** Where the steps run: the session's cwd, or its worktree's for an isolated flow. */
  cwd: string;

  constructor(
    private readonly store: Store,
    private readonly session: Entity,
    private readonly spec: SessionSpec,
    private readonly dir: string,
    private readonly log: (line: string) => void,
  ) {
    this.cwd = spec.cwd;
  }

  /** An isolated fan-out's worker K gets a worktree of its own, from the same base, and knows its place. */
  private isolation(step: PlanStep | undefined): Record<string, unknown> {
    const iso = this.spec.isolation;
    const k = this.spec.mode === "fanout" && step ? /^w(\d+)$/.exec(step.id) : null;
    if (!k) return {};
    return { fanout_worker: Number(k[1]), ...(iso ? { isolation: freshIsolation(iso) } : {}) };
  }

  /** Every run of the session has its mode; a step's own profile may have raised it (SessionSpec.sandbox_profiles). */
  private sandbox(profile: string | null): "workspace" | "off" {
    if (this.spec.sandbox === "workspace") return "workspace";
    return profile !== null && this.spec.sandbox_profiles?.includes(profile) ? "workspace" : "off";
  }

  /** Throws Stopped once the session's own record is terminal. */
  async check(): Promise<void> {
    const e = await this.store.get(this.session.id);
    if (!e || isTerminal(e.status)) throw new Stopped();
  }

  async child(opts: { label: string; model: string; profile: string | null; status: "queued" | "preparing"; prompt?: string; role: string | null; step?: PlanStep }): Promise<Entity> {
    await this.check();
    try {
      return await createRecord(this.store, {
        kind: "invocation",
        parent_id: this.session.id,
        label: opts.label,
        status: opts.status,
        spec: {
          model: opts.model,
          cwd: this.cwd,
          timeout_seconds: this.spec.timeout_seconds,
          // Notify selections belong to the session itself: a step's end fires nothing of its own.
          notify: [],
          // A name, resolved from the session's settings when the step's worker starts it.
          endpoint: usesEndpoint(opts.model) ? this.spec.endpoint : null,
          // By name too: the step's worker resolves it from the session's settings.
          profile: opts.profile,
          settings_dir: this.spec.settings_dir,
          prompt_bytes: opts.prompt === undefined ? null : Buffer.byteLength(opts.prompt),
          role: opts.role,
          step: opts.step ? { id: opts.step.id, depends_on: opts.step.depends_on } : null,
          sandbox: this.sandbox(opts.profile),
          ...this.isolation(opts.step),
          // approvals: ask reaches the steps and workers whose model can ask (not a planner or a synthesis that cannot).
          ...(this.spec.approvals && opts.step && !routeLacking(parseModelSpec(opts.model)) ? this.spec.approvals : {}),
        },
        prompt: opts.prompt,
      });
    } catch (err) {
      // The store refuses a child under a terminal parent: we were killed in between.
      if (err instanceof LiError && err.kind === "conflict") throw new Stopped();
      throw err;
    }
  }

  /** Starts a preparing child's worker; a start failure is recorded on the child by startWorker. */
  async launch(e: Entity): Promise<void> {
    try {
      await startWorker(this.store, e);
    } catch (err: any) {
      this.log(`could not start ${e.label} (${e.id}): ${err?.message ?? err}`);
    }
  }

  /** A queued step becomes preparing with its prompt in place, then its worker starts. */
  async promote(e: Entity, prompt: string): Promise<void> {
    writePrivateFile(path.join(e.run_dir!, "prompt.txt"), prompt);
    await this.check();
    const r = await this.store.transition({
      id: e.id,
      to: "preparing",
      reason: "invocation.preparing.dependencies_met",
      source: "runtime",
      expect: { status: "queued", version: e.version },
    });
    if (!r.ok) return;
    await this.store.annotate(e.id, { spec: { prompt_bytes: Buffer.byteLength(prompt) } });
    this.log(`step ${e.label} started: ${e.id} (${e.spec.model})`);
    await this.launch(r.entity);
  }

  /**
   * The child as it is now. A started child whose process is conclusively gone is reaped to
   * lost (the fenced observation every reader may do); one whose worker never published
   * running in time is failed, so the session cannot wait forever on a spawn that died.
   */
  async refresh(e: Entity, procs: ProcSnapshot): Promise<Entity> {
    let cur = (await this.store.get(e.id)) ?? e;
    if (isTerminal(cur.status)) return cur;
    if (cur.pid !== null) return (await observe(this.store, cur, { reap: true, procs })).entity;
    if (cur.status === "preparing" && Date.now() - Date.parse(cur.updated_at) > SPAWN_DEADLINE_MS) {
      const r = await this.store.transition({
        id: cur.id,
        to: "failed",
        reason: "invocation.failed.spawn_timeout",
        source: "runtime",
        expect: { status: "preparing", version: cur.version },
        detail: { waited_ms: SPAWN_DEADLINE_MS },
      });
      cur = r.ok ? r.entity : ((await this.store.get(e.id)) ?? cur);
    }
    return cur;
  }

  async waitFor(e: Entity): Promise<Entity> {
    for (;;) {
      await this.check();
      const cur = await this.refresh(e, new ProcSnapshot());
      if (isTerminal(cur.status)) return cur;
      await sleep(POLL_MS);
    }
  }

  /** Keeps a copy of a finished child's answer (its result, else its console) among the session's artifacts. */
  keepOutput(e: Entity, name: string): void {
    if (!e.started_at) return;
    try {
      keepAnswer(e, path.join(this.dir, name));
    } catch (err: any) {
      this.log(`could not keep the output of ${e.id}: ${err?.message ?? err}`);
    }
  }
}
