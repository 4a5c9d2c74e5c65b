// The API's shapes (docs/studio-api.md) and the one way the page talks to the server.
import { pageKey } from "./key";

export interface Usage { input_tokens: number | null; output_tokens: number | null; cached_tokens: number | null; cost_usd: number | null }

export interface Job {
  id: string; kind: string; parent_id: string | null; label: string | null; host: string | null;
  /** Placed with --host (a host name or any) and where it may start; null for a run started where submitted. */
  place?: string | null; status: string; terminal: boolean;
  outcome: string | null; reason_code: string | null; placement?: string;
  /** Why, when the record alone does not say: a lease that vouches for nothing, or a missing working directory (`message`). */
  placement_detail?: { reason: string; message?: string } | null; model: string | null; current_phase: string | null;
  pid: number | null; exit_code: number | null; created_at: string; started_at: string | null; ended_at: string | null;
  usage: Usage | null; num_turns: number | null; queue: string | null; queue_position: number | null;
  /** A run's page only: its top-level run's budget charges, that run, and the budget a queued run waits for ("budget NAME"). */
  budgets?: RunCharge[]; budget_root?: string | null; waiting_for?: string | null;
  /** --sandbox workspace: its mode and what it refused (denials null until its worker wrote them); null without one. */
  sandbox?: { mode: "workspace"; denials: SandboxDenials | null } | null;
  /** Where usage came from (docs/gateway.md): gateway, stream, or null; the stream's own figures beside, and whether it under-reported. */
  usage_source?: string | null; stream_usage?: Usage | null; usage_mismatch?: boolean; gateway_calls?: number | null; unmetered?: string | null;
}

/** One model call a metered run made (src/lifecycle/gateway-calls/records.ts). */
export interface GatewayCall {
  seq: number; at: string; model: string | null; input_tokens: number; output_tokens: number; cached_tokens: number;
  cost_usd: number | null; status: string; http_status: number | null; error: string | null;
}

/** What a sandboxed run was refused (src/runtime/sandbox/denials.ts). */
export interface SandboxDenials {
  writes: { path: string; count: number }[]; reads: { path: string; count: number }[]; hosts: { host: string; count: number }[];
  total: number; dropped: number;
}

/** A budget and its current period, as li budget list gives it. */
export interface BudgetFigures {
  name: string; scope: string; unit: "usd" | "tokens"; limit: number; period: string; timezone: string; on_exceed: string;
  reserve_per_run: number; period_start: string; resets_at: string | null; spent: number; reserved: number; left: number;
  used_fraction: number; runs: number;
}
/** One budget a run counts against: `held` is the part of `reserved` its budget still counts. */
export interface RunCharge { budget: string; reserved: number; spent: number; held: number; period_start: string; unit: "usd" | "tokens" | null; limit: number | null }

export interface AuditEvent { id: number; from_status: string | null; to_status: string; reason_code: string | null; source: string | null; at: string; detail: unknown }

export interface RunDetail {
  run: Job; events: AuditEvent[]; children: Job[];
  request: { spec: unknown; prompt: string | null; prompt_truncated: boolean } | null;
  result_text: string | null; console_bytes: number | null; has_graph: boolean;
  /** Which change view the page adds: an isolated run's change, or a fan-out's comparison. */
  change_view: "run" | "fanout" | null;
  /** A metered run's model calls, in order (the first 500). */
  calls?: GatewayCall[];
}

export interface GraphNode {
  id: string; label: string | null; kind: string; host: string | null; role: string | null; step: string | null; status: string;
  outcome: string | null; reason_code: string | null; model: string | null; started_at: string | null; ended_at: string | null; why: string | null;
}
export interface GraphEdge { from: string; to: string; kind: string }
export interface GraphData { root: string; nodes: GraphNode[]; edges: GraphEdge[] }

export interface ChangedFile { path: string; status: string; old_path?: string; insertions: number | null; deletions: number | null; runs_code?: boolean }
export interface CheckResult {
  command: string; name: string | null; exit_code: number | null; signal: string | null; timed_out: boolean;
  duration_ms: number; ran_at: string; output_tail?: string; passed?: boolean;
}
export interface Apply { id: string; host: string; repo: string; onto_sha: string; status: string; commit_sha: string | null; started_at: string; applied_at: string | null }
export interface Change {
  host: string | null; repo: string; base_sha: string; head_sha: string; branch: string; files: ChangedFile[];
  insertions: number; deletions: number; patch_bytes: number; truncated: boolean; source_changed: string[] | null;
  captured_at: string; check: CheckResult | null;
}
export interface RunChange {
  view: "run"; id: string; change_of: string | null; status: string; host: string | null; max_patch_bytes: number;
  captured: boolean; change: Change | null; applies: Apply[]; check_pending: { name: string | null; command: string } | null; note: string | null;
}
export interface FanoutWorker {
  id: string; label: string | null; status: string; outcome: string | null; captured: boolean; files: ChangedFile[];
  insertions: number; deletions: number; truncated: boolean; check: CheckResult | null;
}
export interface Pair {
  a: string; b: string; labels: [string | null, string | null]; computed: boolean; both_files: string[] | null;
  conflict: boolean | null; conflicts: string[] | null; pending?: string; host?: string | null;
}
export interface FanoutChange { view: "fanout"; id: string; session: string; status: string; runs: FanoutWorker[]; pairs: Pair[]; note: string | null }
export interface PatchPage { id: string; text: string; offset: number; end: number; total: number; files: number; binary_bytes: number; cut_bytes: number }

export interface ConsoleSlice { text: string; offset: number; end: number; total: number; truncated: boolean }

export interface ScheduleRun { id: string; entity_id: string | null; trigger: string; fired_at: string; error: string | null; status?: string | null }
export interface Schedule {
  id: string; name: string; cron: string; every_seconds: number | null; timezone: string; enabled: boolean;
  disabled_reason: string | null; kind: string; max_runs: number | null; fired_count: number; label: string | null;
  next_run_at: string | null; last_fired_at: string | null; recent_runs: ScheduleRun[];
}

export interface Team { id: string; name: string; members: string[]; member_count: number; message_count: number; last_message_at: string | null; created_at: string }
export interface Member { name: string; sent: number; received: number; unread: number; read_at: string | null }
export interface Message { id: string; from: string; to: string; body: string; created_at: string }
export interface TeamDetail { team: Team; members: Member[]; messages: Message[] }

export interface Delivery {
  id: string; status: string; handler: string; type: string; destination: string | string[] | null; entity_id: string;
  entity_kind: string | null; attempts: number; max_attempts: number; next_attempt_at: string | null; last_error: string | null; created_at: string;
}
export interface Outbox { deliveries: Delivery[]; counts: Record<string, number> }

export interface Approval {
  id: string; run: string; host: string; tool: string; input: string; asked_at: string; expires_at: string;
  state: "pending" | "allowed" | "denied" | "expired" | "cancelled"; answered_by: string | null; answered_at: string | null; message: string | null; for_run: boolean;
  for_run_scope: "commands" | "tool" | null; answered_via: string | null;
  /** A rule's answer: which rule of which file, and for a shell command which rule each command matched. */
  rule_matches: { rule: number; file: string; command?: string; more?: number }[] | null;
}

export interface Session { version: string; li_home: string; now: string }

export interface ActionAnswer {
  action: string; argv: string[]; exit_code: number | null;
  result: { ok: boolean; data?: any; error?: { kind: string; message: string; detail?: any } } | null;
}

export const UNAUTHORIZED = "session expired or no token: open the URL li studio printed";

/** A failed answer: the server's own message, or what went wrong on the way. */
export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly kind: string | null) { super(message); }
}

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401) throw new ApiError(UNAUTHORIZED, 401, "unauthorized");
  let body: any;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`HTTP ${res.status}: the answer is not JSON`, res.status, null);
  }
  if (!body || body.ok !== true) {
    const e = body?.error;
    throw new ApiError(e?.message ?? `HTTP ${res.status}`, res.status, e?.kind ?? null);
  }
  return body.data as T;
}

export async function get<T>(path: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json", "X-Li-Key": pageKey() } });
  } catch {
    throw new ApiError("the studio server does not answer", 0, null);
  }
  return answer<T>(res);
}

let clockOffset = 0;

export async function loadSession(): Promise<Session> {
  const s = await get<Session>("/api/session");
  const server = Date.parse(s.now);
  if (!Number.isNaN(server)) clockOffset = server - Date.now();
  return s;
}

/** Now on the session's clock: the server's time when the page started, moved on by ours. */
export const serverNow = (): number => Date.now() + clockOffset;

export async function postAction(action: string, target: string): Promise<ActionAnswer> {
  let res: Response;
  try {
    res = await fetch("/api/actions", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Li-Key": pageKey(), Accept: "application/json" },
      body: JSON.stringify({ action, target }),
    });
  } catch {
    throw new ApiError("the studio server does not answer", 0, null);
  }
  return answer<ActionAnswer>(res);
}

export const enc = encodeURIComponent;
