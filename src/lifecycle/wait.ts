import { observe, ProcSnapshot, unresolvedSpawnAfterSeconds, type Observed, type Placement, type PlacementDetail } from "./observe.js";
import { tryResolve, type ResolveError } from "./resolver.js";
import type { Store } from "./store.js";
import { isTerminal } from "./vocab.js";
import { commitWaker } from "./commit-waker.js";

export const WAIT_BOUNDS = {
  max_wait_seconds: { default: 25, min: 0, max: 50 },
  poll_interval_seconds: { default: 1, min: 0.1, max: 10 },
} as const;

const clamp = (v: number | undefined, b: { default: number; min: number; max: number }) =>
  Math.min(b.max, Math.max(b.min, v ?? b.default));

/**
 * The window and poll interval a wait uses. The 50 s ceiling is for programs (ADR-0066 D6: an
 * MCP call must answer before its client gives up); `unbounded` lifts it for a person at a
 * terminal, who waits as long as they asked.
 */
export function effectiveWait(max?: number, poll?: number, opts: { unbounded?: boolean } = {}) {
  const window = WAIT_BOUNDS.max_wait_seconds;
  return {
    max_wait_seconds: clamp(max, opts.unbounded ? { ...window, max: Infinity } : window),
    poll_interval_seconds: clamp(poll, WAIT_BOUNDS.poll_interval_seconds),
  };
}

/** Every entry has exactly these keys, error or not. */
export interface WaitEntry {
  id: string;
  kind: string | null;
  label: string | null;
  /** The host the record was made on; null before hosts were recorded, or with an error. */
  host: string | null;
  status: string | null;
  terminal: boolean | null;
  outcome: string | null;
  reason_code: string | null;
  possibly_orphaned: boolean | null;
  /**
   * Why it is where it is when the record alone does not say, else null: another host's run that
   * no live lease vouches for (observe.ts PlacementDetail: reason host_lease_expired or host_has_no_lease).
   */
  detail: PlacementDetail | null;
  error: ResolveError | null;
}

export interface WaitResult {
  entries: WaitEntry[];
  all_terminal: boolean;
  timed_out: boolean;
  terminal: string[];
  pending: string[];
  stopped_without_end: string[];
  unresolved_spawn: string[];
  errors: string[];
  max_wait_seconds: number;
  poll_interval_seconds: number;
  unresolved_spawn_after_seconds: number;
  elapsed_seconds: number;
}

export type Observation = { input: string; observed?: Observed; error?: ResolveError };

export function entryOf(o: Observation): WaitEntry {
  if (!o.observed) {
    return { id: o.input, kind: null, label: null, host: null, status: null, terminal: null, outcome: null, reason_code: null, possibly_orphaned: null, detail: null, error: o.error! };
  }
  const e = o.observed.entity;
  return {
    id: e.id,
    kind: e.kind,
    label: e.label,
    host: e.host ?? null,
    status: e.status,
    terminal: isTerminal(e.status),
    outcome: e.outcome,
    reason_code: e.reason_code,
    possibly_orphaned: o.observed.possibly_orphaned,
    detail: o.observed.detail ?? null,
    error: null,
  };
}

/** The four disjoint, exhaustive lists over the ids observed without error (D6, Amendment 4). */
export function partition(observations: Observation[]) {
  const lists: Record<Placement, string[]> = { terminal: [], pending: [], stopped_without_end: [], unresolved_spawn: [] };
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const o of observations) {
    if (!o.observed) {
      if (!errors.includes(o.input)) errors.push(o.input);
      continue;
    }
    const id = o.observed.entity.id;
    if (seen.has(id)) continue;
    seen.add(id);
    lists[o.observed.placement].push(id);
  }
  return { ...lists, errors };
}

export interface WaitHooks {
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** After every observation: how many ids are terminal, which are still pending, time so far. */
  onPoll?: (progress: { terminal: number; total: number; pending: string[]; elapsed_seconds: number }) => unknown;
}

/**
 * A bounded observation. Returns what it learned when the window closes (expiry is not an
 * error); pays the one-poll floor when it would otherwise return at once with an id that
 * waiting cannot resolve; a snapshot (window 0) pays nothing.
 */
export async function waitFor(store: Store, ids: string[], opts: { max_wait_seconds?: number; poll_interval_seconds?: number; unbounded?: boolean }, hooks: WaitHooks = {}): Promise<WaitResult> {
  const eff = effectiveWait(opts.max_wait_seconds, opts.poll_interval_seconds, { unbounded: opts.unbounded });
  const now = hooks.now ?? Date.now;
  const sleep = hooks.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  // While ids are pending, a commit (a worker recording its end) ends the sleep early. The
  // waker's watch opens at its first sleep: a call that never sleeps pays nothing.
  const waker = hooks.sleep ? null : commitWaker(store);
  const untilChange = waker ? (ms: number) => waker.sleep(ms) : sleep;
  const start = now();
  const deadline = start + eff.max_wait_seconds * 1000;

  // In the given order, one at a time: each observation may reap, and reads see earlier reaps.
  const look = async (): Promise<Observation[]> => {
    const procs = new ProcSnapshot();
    const out: Observation[] = [];
    for (const input of ids) {
      const r = await tryResolve(store, input);
      out.push(r.entity ? { input, observed: await observe(store, r.entity, { reap: true, procs }) } : { input, error: r.error });
    }
    return out;
  };

  let waited = false;
  let timedOut = false;
  let obs: Observation[];
  try {
    obs = await look();
    for (;;) {
      const part = partition(obs);
      await hooks.onPoll?.({ terminal: part.terminal.length, total: ids.length, pending: part.pending, elapsed_seconds: (now() - start) / 1000 });
      const remaining = deadline - now();
      const unresolvable = part.stopped_without_end.length + part.unresolved_spawn.length > 0;
      if (part.pending.length === 0) {
        // Only the one-poll floor (ADR-0066 D6) can keep it: a call that has not waited yet pays it.
        if (!unresolvable || waited || remaining <= 0) break;
      } else if (remaining <= 0) {
        timedOut = true;
        break;
      }
      // Beside an id that waiting cannot resolve, the interval is slept whole: the call's floor is
      // then met as a duration, as that id's caller was told. Otherwise a commit ends it early.
      await (unresolvable ? sleep : untilChange)(Math.min(eff.poll_interval_seconds * 1000, remaining));
      waited = true;
      obs = await look();
    }
  } finally {
    await waker?.close();
  }

  const part = partition(obs);
  return {
    entries: obs.map(entryOf),
    all_terminal: part.errors.length === 0 && part.pending.length + part.stopped_without_end.length + part.unresolved_spawn.length === 0,
    timed_out: timedOut,
    ...part,
    ...eff,
    unresolved_spawn_after_seconds: unresolvedSpawnAfterSeconds(),
    elapsed_seconds: Math.round(now() - start) / 1000,
  };
}

/** li wait's documented exit status: 2 an id error, 3 timed out, 1 anything not succeeded, 0 all succeeded. */
export function waitExitCode(r: WaitResult): number {
  if (r.errors.length) return 2;
  if (r.timed_out) return 3;
  const allSucceeded = r.all_terminal && r.entries.every((e) => e.outcome === "succeeded");
  return allSucceeded ? 0 : 1;
}
