import { mapSeq } from "../lifecycle/seq.js";
import type { Entity, Store } from "../lifecycle/store.js";
import { HttpError } from "./http-answer.js";
import { entityOf } from "./runs.js";

/*
 * A flow, fan-out or play as a DAG, from the records alone: a session's steps carry their plan
 * step (id and depends_on) in their spec, its planner and synthesis are labelled so, and a
 * play owns its session. The page lays it out; this only says what is connected to what.
 */

export type EdgeKind = "depends" | "plans" | "feeds" | "owns";

export interface GraphNode {
  id: string;
  label: string;
  kind: string;
  /** The host the run was made on (null: before hosts were recorded). */
  host: string | null;
  role: string | null;
  step: string | null;
  status: string;
  outcome: string | null;
  reason_code: string | null;
  model: string | null;
  started_at: string | null;
  ended_at: string | null;
  why: string | null;
}

const stepOf = (e: Entity): { id: string; depends_on: string[] } | null => (e.spec.step && typeof e.spec.step.id === "string" ? e.spec.step : null);

/** Why a step was cancelled without running: the dependency its cancel names (the audit row's detail). */
async function whyCancelled(store: Store, e: Entity): Promise<string | null> {
  if (e.status !== "cancelled") return null;
  const ev = (await store.events(e.id)).find((x) => x.to_status === "cancelled");
  if (!ev?.detail) return null;
  const d = JSON.parse(ev.detail) as { dependency?: string; dependency_status?: string };
  return d.dependency ? `cancelled: dependency ${d.dependency} ${d.dependency_status ?? "did not complete"}` : null;
}

async function node(store: Store, e: Entity): Promise<GraphNode> {
  const step = stepOf(e);
  return {
    id: e.id,
    label: e.label ?? step?.id ?? e.kind,
    kind: e.kind,
    host: e.host ?? null,
    role: (e.spec.role as string | undefined) ?? null,
    step: step?.id ?? null,
    status: e.status,
    outcome: e.outcome,
    reason_code: e.reason_code,
    model: (e.spec.model as string | undefined) ?? null,
    started_at: e.started_at,
    ended_at: e.ended_at,
    why: (await whyCancelled(store, e)),
  };
}

export async function graphOf(store: Store, id: string) {
  const root = await entityOf(store, id);
  if (root.kind === "invocation") throw new HttpError(404, `${id} is a single run, not a flow, fan-out or play: it has no graph`);
  const tree = await store.tree(id);
  const edges: { from: string; to: string; kind: EdgeKind }[] = [];
  for (const parent of tree.filter((e) => e.kind !== "invocation")) {
    const kids = tree.filter((e) => e.parent_id === parent.id);
    for (const k of kids) if (k.kind !== "invocation") edges.push({ from: parent.id, to: k.id, kind: "owns" });
    const steps = kids.filter((k) => stepOf(k));
    const byStep = new Map(steps.map((s) => [stepOf(s)!.id, s]));
    const planner = kids.find((k) => k.label === "planner" && !stepOf(k));
    const synthesis = kids.find((k) => k.label === "synthesis" && !stepOf(k));
    const needed = new Set<string>();
    for (const s of steps)
      for (const d of stepOf(s)!.depends_on) {
        const dep = byStep.get(d);
        if (!dep) continue;
        needed.add(dep.id);
        edges.push({ from: dep.id, to: s.id, kind: "depends" });
      }
    // A fan-out's workers have no plan steps: each is a first and a last step at once.
    const workers = steps.length ? steps : kids.filter((k) => k.kind === "invocation" && k !== planner && k !== synthesis);
    // Without a planner run (a plan file, a playbook, the mock planner) the session itself planned.
    const source = planner ?? parent;
    if (parent.kind === "session") for (const s of workers) if (!(stepOf(s)?.depends_on.length)) edges.push({ from: source.id, to: s.id, kind: "plans" });
    if (planner && source !== parent) edges.push({ from: parent.id, to: planner.id, kind: "owns" });
    if (synthesis) for (const s of workers) if (!needed.has(s.id)) edges.push({ from: s.id, to: synthesis.id, kind: "feeds" });
  }
  return { root: id, nodes: await mapSeq(tree, (e) => node(store, e)), edges };
}
