import path from "node:path";
import type { Observed } from "../lifecycle/observe.js";
import type { Entity } from "../lifecycle/store.js";
import { usageOf, usageUnknown } from "../lifecycle/usage.js";
import { isTerminal } from "../lifecycle/vocab.js";

/* The machine views of a record: what li job status and li state list print, and what li studio shows. */

/** What every machine view of a record starts with; raw values only (ADR-0066 D7). */
function recordFields(e: Entity) {
  return {
    id: e.id,
    kind: e.kind,
    parent_id: e.parent_id,
    label: e.label,
    // Where it was made (null: before hosts were recorded); its steps run there too.
    host: e.host ?? null,
    // Placed with --host (a host name or any): where it may start; null for a run started where it was submitted.
    place: e.place ?? null,
    status: e.status,
    terminal: isTerminal(e.status),
    outcome: e.outcome,
    reason_code: e.reason_code,
  };
}

/** The process and timing fields, in the order both views show them. */
function runFields(e: Entity) {
  return {
    model: (e.spec.model as string | undefined) ?? null,
    current_phase: e.current_phase,
    pid: e.pid,
    pgid: e.pgid,
    exit_code: e.exit_code,
    created_at: e.created_at,
  };
}

/** The machine view of one job, as observed (a run whose process is gone is reaped first). */
export function jobView(o: Observed) {
  const e = o.entity;
  return {
    ...recordFields(e),
    placement: o.placement,
    // Why, when the record alone does not say (another host's run no live lease vouches for).
    placement_detail: o.detail ?? null,
    possibly_orphaned: o.possibly_orphaned,
    ...runFields(e),
    started_at: e.started_at,
    ended_at: e.ended_at,
    run_dir: e.run_dir,
    console_log: e.run_dir ? path.join(e.run_dir, "console.log") : null,
    profile: (e.spec.profile as string | undefined) ?? null,
    resumes: (e.spec.resumes as string | undefined) ?? null,
    // What the provider reported (null for providers that report nothing, e.g. mock).
    usage: usageOf(e),
    // Why usage is null though the provider reported some: li could not tell this run's part (li stats counts these runs apart).
    usage_unknown: usageUnknown(e),
    // Where usage came from (docs/gateway.md): gateway (the API's answers), else stream (the provider's own word).
    ...usageSource(e),
    provider_session_id: e.provider_session_id,
    num_turns: e.num_turns,
    has_result: e.result_text !== null,
    queue: e.queue ?? null,
    queue_position: o.queue_position ?? null,
    // --isolate worktree: its branch and base (null: it ran in its directory itself).
    isolation: isolationView(e),
    // --sandbox workspace: what it refused (null: it ran without a sandbox).
    sandbox: sandboxView(e),
  };
}

/** gateway: metered from its calls, the stream's figures beside; stream: the provider's word (unmetered says why). */
function usageSource(e: Entity) {
  const g = e.spec.gateway as Record<string, any> | undefined;
  return {
    // Not through the gateway: a declared ACP agent's usage is its own word, another provider's its stream's.
    usage_source: (g?.usage_source as string | undefined) ?? (e.usage ? (String(e.spec.model).startsWith("acp/") ? "agent" : "stream") : null),
    stream_usage: g?.stream_usage ?? null,
    usage_mismatch: g?.usage_mismatch === true,
    gateway_calls: typeof g?.calls === "number" ? g.calls : null,
    unmetered: (g?.unmetered as string | undefined) ?? null,
  };
}

/** A sandboxed run's mode and refusals; denials is null until its worker has written them (at its end). */
function sandboxView(e: Entity) {
  if (e.spec.sandbox !== "workspace") return null;
  // held: a checkout run's files that run code its agent created, moved out of the tree (docs/sandbox.md); unheld: ones li could not move.
  return {
    mode: "workspace" as const,
    denials: e.spec.sandbox_denials ?? null,
    ...(e.spec.sandbox_held?.length ? { held: e.spec.sandbox_held as string[] } : {}),
    ...(e.spec.sandbox_unheld?.length ? { unheld: e.spec.sandbox_unheld as string[] } : {}),
    // limits: what bounded it (docs/sandbox.md#limits): tasks, bytes, bytes; null where this host enforced none.
    ...(e.spec.sandbox_limits ? { limits: e.spec.sandbox_limits as { pids: number | null; memory: number | null; tmp: number | null } } : {}),
  };
}

/** Where an isolated run works: its branch from its base, and on which host's checkout. */
function isolationView(e: Entity) {
  const iso = e.spec.isolation;
  if (!iso) return null;
  return {
    mode: "worktree" as const,
    branch: iso.branch ?? null,
    base: iso.base ?? null,
    base_sha: iso.base_sha ?? null,
    repo: iso.repo ?? null,
    worktree: iso.worktree ?? null,
    keep_worktree: !!iso.keep_worktree,
    continues: iso.continues ?? null,
    // What runs in the worktree once the change is captured (--check-cmd, --check NAME).
    check: iso.check ? { name: iso.check.name ?? null, command: iso.check.command } : null,
  };
}

export type JobView = ReturnType<typeof jobView>;

/**
 * The machine view of one record exactly as state.db holds it: no process is looked at, so
 * nothing is reaped, and version and updated_at say which write it reflects.
 */
export function recordView(e: Entity) {
  return {
    ...recordFields(e),
    version: e.version,
    ...runFields(e),
    updated_at: e.updated_at,
    started_at: e.started_at,
    ended_at: e.ended_at,
    run_dir: e.run_dir,
  };
}
