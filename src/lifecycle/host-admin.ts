import { dbOf } from "./db/handle.js";
import { hostLoad, unfinishedOn } from "./hosts.js";
import { failPendingKillRequests } from "./kill-requests.js";
import { dropHost, leases, type LeaseView } from "./leases.js";
import { forgetHostSandbox, hostSandboxes, type HostSandbox } from "./host-sandbox.js";
import type { Entity, Store } from "./store.js";
import { hydrate } from "./store.js";

/*
 * What `li host list` shows and what `li host forget` does (issue 19). A host is "seen" when it
 * has a registration (a hosts row), when unfinished records carry its name, or when runs are
 * placed for it by name: a name no daemon ever registered still shows, with lease `none`, so
 * runs nothing will claim or reap are not invisible.
 */

/** Runs placed with --host and not yet claimed: queued, no host yet, by place ('any' or a host name). */
const PLACED = "place IS NOT NULL AND status = 'queued' AND host IS NULL";

export interface HostEntry {
  host: string;
  /** none: no registration (no daemon ever ran for it here, or it was forgotten). */
  lease: "alive" | "expired" | "none";
  /** Seconds since the last heartbeat by the database's clock; null without a registration. */
  heartbeat_age_seconds: number | null;
  epoch: number | null;
  max_parallel: number | null;
  pid: number | null;
  started_at: string | null;
  heartbeat_at: string | null;
  lease_until: string | null;
  stopped_at: string | null;
  preparing: number;
  queued: number;
  running: number;
  /** Runs placed for this host by name (--host NAME) that no daemon has claimed yet. */
  placed: number;
  /** Whether it can sandbox a run, as its daemon last found; null: no daemon has said. */
  sandbox: HostSandbox | null;
}

export interface HostList {
  hosts: HostEntry[];
  /** Runs placed for any host (--host any) that no daemon has claimed yet. */
  placed_any: number;
  count: number;
}

async function placedCounts(store: Store): Promise<Map<string, number>> {
  const rows = await dbOf(store).all<{ place: string; n: number }>(`SELECT place, count(*) AS n FROM entities WHERE ${PLACED} GROUP BY place`);
  return new Map(rows.map((r) => [r.place, Number(r.n)]));
}

function entry(host: string, lease: LeaseView | undefined): HostEntry {
  const r = lease?.row;
  return {
    host,
    lease: lease?.lease ?? "none",
    heartbeat_age_seconds: lease?.heartbeat_age_seconds ?? null,
    epoch: r ? Number(r.epoch) : null,
    max_parallel: r ? Number(r.max_parallel) : null,
    pid: r?.pid ?? null,
    started_at: r?.started_at ?? null,
    heartbeat_at: r?.heartbeat_at ?? null,
    lease_until: r?.lease_until ?? null,
    stopped_at: r?.stopped_at ?? null,
    preparing: 0,
    queued: 0,
    running: 0,
    placed: 0,
    sandbox: null,
  };
}

/** Every host seen, by name, with its lease (judged by the database's clock) and its unfinished runs. */
export async function listHosts(store: Store): Promise<HostList> {
  const byName = new Map<string, HostEntry>();
  for (const l of await leases(store)) byName.set(l.host, entry(l.host, l));
  const at = (host: string) => byName.get(host) ?? byName.set(host, entry(host, undefined)).get(host)!;
  // Records from before hosts were recorded, and placed runs not yet claimed, have no host.
  for (const l of await hostLoad(store)) if (l.host !== null && (l.status === "preparing" || l.status === "queued" || l.status === "running")) at(l.host)[l.status] += Number(l.n);
  const placed = await placedCounts(store);
  for (const [place, n] of placed) if (place !== "any") at(place).placed += n;
  for (const [host, sandbox] of await hostSandboxes(store)) if (byName.has(host)) at(host).sandbox = sandbox;
  const hosts = [...byName.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  return { hosts, placed_any: placed.get("any") ?? 0, count: hosts.length };
}

export interface ForgetPlan {
  host: string;
  lease: "alive" | "expired" | "none";
  heartbeat_age_seconds: number | null;
  /** The host's unfinished records, leaves before their parents: what forgetting ends `lost`. */
  records: Entity[];
  /** Runs placed for the host by name and not claimed: not its runs, left queued. */
  placed: Entity[];
  /** Kill requests waiting for the host: never carried out once it is forgotten. */
  kill_requests: number;
  registered: boolean;
}

/** Children before parents (a tree lives on one host), so a parent's end is recorded after its steps'. */
function leavesFirst(records: Entity[]): Entity[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const depth = (e: Entity): number => {
    let d = 0;
    for (let p = e.parent_id ? byId.get(e.parent_id) : undefined; p && d < 64; p = p.parent_id ? byId.get(p.parent_id) : undefined) d++;
    return d;
  };
  return records.map((e) => ({ e, d: depth(e) })).sort((a, b) => b.d - a.d || (a.e.id < b.e.id ? -1 : 1)).map((x) => x.e);
}

/** Runs placed on `host` by name and not claimed, in line order. */
export async function placedOn(store: Store, host: string): Promise<Entity[]> {
  return (await dbOf(store).all(`SELECT * FROM entities WHERE ${PLACED} AND place = ? ORDER BY queue_seq`, [host])).map((r) => hydrate(r)!);
}

/** What forgetting `host` would do, read now (inside the caller's transaction when there is one). */
export async function forgetPlan(store: Store, host: string): Promise<ForgetPlan> {
  const db = dbOf(store);
  const lease = (await leases(store, host))[0];
  const records = await unfinishedOn(store, host);
  const placed = await placedOn(store, host);
  const kr = await db.get<{ n: number }>("SELECT count(*) AS n FROM kill_requests WHERE host = ? AND status = 'pending'", [host]);
  return {
    host,
    lease: lease?.lease ?? "none",
    heartbeat_age_seconds: lease?.heartbeat_age_seconds ?? null,
    records: leavesFirst(records),
    placed,
    kill_requests: Number(kr?.n ?? 0),
    registered: !!lease,
  };
}

export interface Forgotten {
  plan: ForgetPlan;
  /** Each record ended, with the status it had. */
  ended: { entity: Entity; from: string }[];
  /** Records that ended by themselves (or were moved by another writer) meanwhile: left as they are. */
  skipped: { entity: Entity; refused: string }[];
  dropped: boolean;
}

/**
 * Forgets `host` in one transaction: `check` sees the plan first (and may refuse by throwing,
 * which writes nothing); then every unfinished record of the host ends `lost`
 * (`<kind>.lost.host_forgotten`, source operator) through the compare-and-set, the host's
 * pending kill requests fail, and its registration is dropped.
 */
export function forgetHost(store: Store, host: string, check: (plan: ForgetPlan) => void): Promise<Forgotten> {
  return store.tx(async (): Promise<Forgotten> => {
    const plan = await forgetPlan(store, host);
    check(plan);
    const ended: Forgotten["ended"] = [];
    const skipped: Forgotten["skipped"] = [];
    for (const e of plan.records) {
      const r = await store.transition({
        id: e.id,
        to: "lost",
        reason: `${e.kind}.lost.host_forgotten`,
        source: "operator",
        expect: { status: e.status, version: e.version },
        detail: { host },
      });
      if (r.ok) ended.push({ entity: r.entity, from: r.from });
      else skipped.push({ entity: r.entity ?? e, refused: r.refused });
    }
    // In the shape li kill reads a failed request's error in, so a requester still waiting reports it.
    if (plan.kill_requests)
      await failPendingKillRequests(store, host, { kind: "conflict", message: `host ${host} was forgotten (li host forget): its runs ended lost`, detail: { reason: "host_forgotten", host } });
    const dropped = await dropHost(store, host);
    await forgetHostSandbox(store, host);
    return { plan, ended, skipped, dropped };
  });
}
