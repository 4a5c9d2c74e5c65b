import { invalid, LiError } from "../../errors.js";
import { dbNow } from "../db/fragments.js";
import { dbOf, watchChannel, type HasSql } from "../db/handle.js";
import { isWellFormedPrefix, newId } from "../ids.js";

/*
 * Approval requests (issue 39): a permission prompt of an agent's run, held in the store so that
 * a person on any host can answer it. The worker inserts a request pending and polls it; an
 * answer, the timeout, or the end of the run moves it out of pending exactly once, by a
 * compare-and-set on state = 'pending', so of two answers given at once one wins and the other
 * is told which state it found.
 */

export type ApprovalState = "pending" | "allowed" | "denied" | "expired" | "cancelled";
export const APPROVAL_STATES: readonly ApprovalState[] = ["pending", "allowed", "denied", "expired", "cancelled"];

/** The tool input a record keeps, in bytes of JSON: enough to judge a command, never a file's contents. */
export const MAX_INPUT_BYTES = 16 * 1024;
/** An answer's message, in bytes: a sentence for the agent, not a document. */
export const MAX_MESSAGE_BYTES = 4 * 1024;

export interface Approval {
  id: string;
  run: string;
  host: string;
  tool: string;
  /** The tool's input as JSON text: bounded (MAX_INPUT_BYTES), known secrets masked. */
  input: string;
  tool_use_id: string | null;
  asked_at: string;
  expires_at: string;
  state: ApprovalState;
  /** user@host, `rule:<n>`, `timeout`, or what ended the run (`kill`, `reap`). */
  answered_by: string | null;
  answered_at: string | null;
  message: string | null;
  /** Given with --for-run or --for-run-tool: it answers the run's later requests it covers too. */
  for_run: boolean;
  /** What it covers: `commands` (--for-run: the same commands), `tool` (--for-run-tool: every later request for the tool), or null. */
  for_run_scope: ForRunScope | null;
  /** The earlier --for-run or --for-run-tool answer that answered this request, when one did (from the message the worker wrote). */
  answered_via: string | null;
  /** For a request a rule answered: which rule of which file, and for a shell command each of its simple commands with the rule it matched. */
  rule_matches: RuleMatch[] | null;
}

/** One rule's part in answering a request: its number and file, and the simple command it matched (none for a rule on a whole tool or by input_matches). */
export interface RuleMatch {
  rule: number;
  file: string;
  command?: string;
  /** On the last match kept of a request with more than 200 simple commands: how many more matched and are not listed. */
  more?: number;
}

export type ForRunScope = "commands" | "tool";
/** The for_run column: 0 none, 1 --for-run (the same commands), 2 --for-run-tool. */
const SCOPE_OF: Record<number, ForRunScope> = { 1: "commands", 2: "tool" };

interface Row extends Omit<Approval, "run" | "for_run" | "for_run_scope" | "answered_via" | "rule_matches"> {
  entity_id: string;
  for_run: number | boolean;
  rule_matches: string | null;
}

/** The rule_matches column as written by recordAnswered; null for anything else (a store is shared, not trusted to be well formed). */
function matchesOf(text: string | null): RuleMatch[] | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const fromRow = ({ entity_id, for_run, rule_matches, ...r }: Row): Approval => {
  const scope = SCOPE_OF[Number(for_run)] ?? null;
  const via = r.message ? /^(?:allowed|denied) for the run by .+? \((apr_[0-9a-z]+): /.exec(r.message) : null;
  return { ...r, run: entity_id, for_run: scope !== null, for_run_scope: scope, answered_via: via?.[1] ?? null, rule_matches: matchesOf(rule_matches) };
};

/** `text` with every secret replaced by ***; the secrets a worker knows of are its environment's credentials. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  for (const s of secrets) if (s.length >= 6) text = text.split(s).join("***");
  return text;
}

/** The values of `env` that name themselves credentials (KEY, TOKEN, SECRET, PASSWORD): what a record masks. */
export function envSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([k, v]) => typeof v === "string" && /KEY|TOKEN|SECRET|PASSW|CREDENTIAL/i.test(k))
    .map(([, v]) => v as string);
}

/** A tool input as a record keeps it: JSON, secrets masked, cut to MAX_INPUT_BYTES with a mark saying so. */
export function boundedInput(input: unknown, secrets: readonly string[]): string {
  const text = maskSecrets(JSON.stringify(input ?? {}), secrets);
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_INPUT_BYTES) return text;
  // Cut text is no longer JSON: keep it as a string, so every reader still parses the column.
  const head = bytes.subarray(0, MAX_INPUT_BYTES - 200).toString("utf8").replace(/\uFFFD$/, "");
  return JSON.stringify({ truncated: true, bytes: bytes.length, head });
}

export interface NewApproval {
  /** The record's id, made once per request, so that a retried write finds the row an earlier attempt wrote instead of adding another. */
  id?: string;
  run: string;
  host: string;
  tool: string;
  input: string;
  toolUseId?: string | null;
  timeoutSeconds: number;
}

/** Records a pending request; its row. */
export async function requestApproval(store: HasSql, a: NewApproval): Promise<Approval> {
  const db = dbOf(store);
  const id = a.id ?? newId("approval");
  await db.run(
    `INSERT INTO approvals (id, entity_id, host, tool, input, tool_use_id, asked_at, expires_at, state, for_run)
     VALUES (?, ?, ?, ?, ?, ?, ${dbNow(db.dialect)}, ${dbNow(db.dialect, true)}, 'pending', 0) ON CONFLICT (id) DO NOTHING`,
    [id, a.run, a.host, a.tool, a.input, a.toolUseId ?? null, a.timeoutSeconds],
  );
  return (await getApproval(store, id))!;
}

/** At most this many matches are kept (a request of thousands of commands names the first ones, and says how many there were). */
const MAX_MATCHES = 200;
/** A command's text in a match, in characters: the record already holds the whole input. */
const MAX_MATCH_COMMAND = 500;

/** The matches as the column keeps them: each command cut to MAX_MATCH_COMMAND, at most MAX_MATCHES, the last kept counting the rest. */
function boundedMatches(matches: readonly RuleMatch[]): string {
  const kept = matches.slice(0, MAX_MATCHES).map((m) => (m.command !== undefined && m.command.length > MAX_MATCH_COMMAND ? { ...m, command: m.command.slice(0, MAX_MATCH_COMMAND - 1) + "…" } : m));
  if (matches.length > MAX_MATCHES) kept[kept.length - 1] = { ...kept[kept.length - 1], more: matches.length - MAX_MATCHES };
  return JSON.stringify(kept);
}

/** Records a request a rule (or an earlier --for-run answer) answered at once: no person ever sees it pending. */
export async function recordAnswered(store: HasSql, a: NewApproval, answer: { state: "allowed" | "denied"; by: string; message?: string | null; matches?: RuleMatch[] }): Promise<Approval> {
  const db = dbOf(store);
  const id = a.id ?? newId("approval");
  // The write and its read in one transaction, and a retry of it with the same id adds nothing:
  // a read that failed after the insert (a pool's wait running out under load) made the retry
  // store the answer twice, past the run's cap (seen on PostgreSQL at a load average of 25).
  return db.tx(async () => {
    await db.run(
      `INSERT INTO approvals (id, entity_id, host, tool, input, tool_use_id, asked_at, expires_at, state, answered_by, answered_at, message, for_run, rule_matches)
       VALUES (?, ?, ?, ?, ?, ?, ${dbNow(db.dialect)}, ${dbNow(db.dialect)}, ?, ?, ${dbNow(db.dialect)}, ?, 0, ?) ON CONFLICT (id) DO NOTHING`,
      [id, a.run, a.host, a.tool, a.input, a.toolUseId ?? null, answer.state, answer.by, answer.message ?? null, answer.matches?.length ? boundedMatches(answer.matches) : null],
    );
    return (await getApproval(store, id))!;
  });
}

/** The request whose id is `text` or the one id starting with it; undefined when none. An ambiguous prefix is an error. */
export async function getApproval(store: HasSql, text: string): Promise<Approval | undefined> {
  const key = text.trim().toLowerCase();
  if (!isWellFormedPrefix(key)) return undefined;
  const rows = await dbOf(store).all<Row>("SELECT * FROM approvals WHERE id >= ? AND id < ? ORDER BY id LIMIT 11", [key, key + "\u{10ffff}"]);
  const exact = rows.find((r) => r.id === key);
  if (exact || rows.length === 1) return fromRow(exact ?? rows[0]);
  if (rows.length > 1)
    throw invalid(`${key} matches ${rows.length > 10 ? "more than 10" : rows.length} approval requests; give more of the id`, { id: text, code: "ambiguous", matches: rows.slice(0, 10).map((r) => r.id) });
  return undefined;
}

/** Newest first; every state unless `state`, every run unless `run`. */
export async function listApprovals(store: HasSql, o: { state?: ApprovalState; run?: string; limit?: number } = {}): Promise<Approval[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (o.state) (where.push("state = ?"), params.push(o.state));
  if (o.run) (where.push("entity_id = ?"), params.push(o.run));
  const rows = await dbOf(store).all<Row>(
    `SELECT * FROM approvals${where.length ? " WHERE " + where.join(" AND ") : ""} ORDER BY asked_at DESC, id DESC LIMIT ?`,
    [...params, o.limit ?? 100],
  );
  return rows.map(fromRow);
}

export interface Answer {
  answer: "allow" | "deny";
  /** user@host */
  by: string;
  message?: string | null;
  /** --for-run (the same commands) or --for-run-tool. */
  forRun?: ForRunScope | null;
}

export type AnswerResult = { ok: true; approval: Approval } | { ok: false; approval: Approval };

/** Refuses a message over MAX_MESSAGE_BYTES before anything is written. */
export function checkMessage(message: string | null | undefined): void {
  if (message == null) return;
  const bytes = Buffer.byteLength(message, "utf8");
  if (bytes > MAX_MESSAGE_BYTES) throw invalid(`the message is ${bytes} bytes; at most ${MAX_MESSAGE_BYTES} are kept`, { field: "message", bytes, max: MAX_MESSAGE_BYTES });
}

/** The NOTIFY channel an answer wakes the asking worker on (PostgreSQL); its payload is the request's id. */
export const ANSWER_CHANNEL = "li_approval";

/**
 * Calls `onAnswered` with the id of each request answered from now on (PostgreSQL's NOTIFY);
 * null where the store has no notifications (SQLite) or the listening connection could not be
 * made. A wake-up only: `onLost` says notifications may have been missed.
 */
export function watchAnswers(store: HasSql, onAnswered: (id: string) => void, onLost: () => void): Promise<(() => Promise<void>) | null> {
  return watchChannel(store, ANSWER_CHANNEL, onAnswered, onLost);
}

/**
 * Answers a pending request: the updated record, or `ok: false` with the record as it was found
 * (its state names why: answered, expired or cancelled). not_found for an unknown id.
 */
export async function answerApproval(store: HasSql, id: string, a: Answer): Promise<AnswerResult> {
  // A caller other than li approve / li deny (the studio, a script) may send anything: one answer, exactly.
  if (a.answer !== "allow" && a.answer !== "deny") throw invalid(`an answer is allow or deny, got ${JSON.stringify(a.answer)}`, { field: "answer" });
  if (a.forRun != null && a.forRun !== "commands" && a.forRun !== "tool") throw invalid(`for_run is commands or tool, got ${JSON.stringify(a.forRun)}`, { field: "for_run" });
  checkMessage(a.message);
  const found = await getApproval(store, id);
  if (!found) throw new LiError("not_found", `no approval request has an id starting ${id}; see li approvals --all`, { id });
  const db = dbOf(store);
  const { changes } = await db.run(
    `UPDATE approvals SET state = ?, answered_by = ?, answered_at = ${dbNow(db.dialect)}, message = ?, for_run = ? WHERE id = ? AND state = 'pending'`,
    [a.answer === "allow" ? "allowed" : "denied", a.by, a.message ?? null, a.forRun === "tool" ? 2 : a.forRun === "commands" ? 1 : 0, found.id],
  );
  // Wakes the waiting worker now rather than at its next poll; a lost notification costs one poll.
  if (changes === 1 && db.dialect === "postgres") await db.get("SELECT pg_notify(?, ?)", [ANSWER_CHANNEL, found.id]).catch(() => null);
  const now = (await getApproval(store, found.id))!;
  return { ok: changes === 1, approval: now };
}

/** Ends a request nobody answered in time: false when an answer came first. */
export async function expireApproval(store: HasSql, id: string, message: string): Promise<boolean> {
  const db = dbOf(store);
  const { changes } = await db.run(`UPDATE approvals SET state = 'expired', answered_by = 'timeout', answered_at = ${dbNow(db.dialect)}, message = ? WHERE id = ? AND state = 'pending'`, [message, id]);
  return changes === 1;
}

/** Cancels every request of `run` still pending (the run was killed or reaped); how many. */
export async function cancelPendingApprovals(store: HasSql, run: string, by: string, message: string): Promise<number> {
  const db = dbOf(store);
  const { changes } = await db.run(`UPDATE approvals SET state = 'cancelled', answered_by = ?, answered_at = ${dbNow(db.dialect)}, message = ? WHERE entity_id = ? AND state = 'pending'`, [by, message, run]);
  return changes;
}

/** The --for-run and --for-run-tool answers given earlier in `run` for `tool`, newest first: each may answer this request too (rules.ts coversRequest). */
export async function forRunAnswers(store: HasSql, run: string, tool: string): Promise<Approval[]> {
  const rows = await dbOf(store).all<Row>("SELECT * FROM approvals WHERE entity_id = ? AND tool = ? AND for_run <> 0 AND state IN ('allowed', 'denied') ORDER BY answered_at DESC, id DESC LIMIT 100", [run, tool]);
  return rows.map(fromRow);
}

/** How many requests of `run` the store holds, in any state: the worker's start for its cap on stored requests. */
export async function countApprovals(store: HasSql, run: string): Promise<number> {
  const [row] = await dbOf(store).all<{ n: number | string }>("SELECT count(*) AS n FROM approvals WHERE entity_id = ?", [run]);
  return Number(row?.n ?? 0);
}

/** The pending request each of `runs` waits on (its oldest), by run: what `waiting_for` shows. */
export async function waitingFor(store: HasSql, runs: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!runs.length) return out;
  const rows = await dbOf(store).all<{ id: string; entity_id: string }>(
    `SELECT id, entity_id FROM approvals WHERE state = 'pending' AND entity_id IN (${runs.map(() => "?").join(", ")}) ORDER BY asked_at DESC, id DESC`,
    runs,
  );
  for (const r of rows) out.set(r.entity_id, r.id);
  return out;
}
