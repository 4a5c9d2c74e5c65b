import { invalid, LiError } from "../errors.js";
import { dbOf } from "./db/handle.js";
import { isUniqueViolation } from "./db/types.js";
import { newId } from "./ids.js";
import { checkName } from "./names.js";
import type { Store } from "./store.js";
import { rowByNameOrIdPrefix } from "./resolver.js";

/*
 * Teams, their members and messages (tables from migration 4). Each member has a read
 * cursor: the sequence number of the last message it received. A receive reads and moves
 * its cursor in one transaction, so two receives by the same member never return the same
 * message twice, and a message sent between them is never skipped.
 */

/** The documented body cap: fits one argv element, so an MCP send never needs a spill file. */
export const BODY_CAP_BYTES = 64 * 1024;
export const MAX_MEMBERS = 100;
/** `--to all` addresses every member but the sender; no member may be called this. */
export const BROADCAST = "all";

interface TeamRow {
  id: string;
  name: string;
  created_at: string;
}

interface MemberRow {
  team_id: string;
  name: string;
  read_seq: number;
  read_at: string | null;
  joined_at: string;
}

interface MessageRow {
  seq: number;
  id: string;
  team_id: string;
  sender: string;
  recipient: string | null;
  body: string;
  created_at: string;
}

const iso = () => new Date().toISOString();

export function messageView(m: MessageRow) {
  return { id: m.id, from: m.sender, to: m.recipient ?? BROADCAST, body: m.body, created_at: m.created_at };
}

export type MessageView = ReturnType<typeof messageView>;

/** Member names: split on commas too, so `--member a,b` and `--member a b` agree; duplicates collapse. */
export function checkMembers(values: string[]): string[] {
  const names = [...new Set(values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean))];
  if (names.length === 0) throw invalid("a team needs at least one --member", { field: "member" });
  if (names.length > MAX_MEMBERS) throw invalid(`a team has at most ${MAX_MEMBERS} members; got ${names.length}`, { field: "member", count: names.length });
  for (const n of names) {
    checkName("member", n);
    if (n.toLowerCase() === BROADCAST) throw invalid(`"${n}" cannot be a member name: --to ${BROADCAST} means every member`, { field: "member", name: n });
  }
  return names;
}

export async function createTeam(store: Store, name: string, members: string[]): Promise<TeamRow> {
  const db = dbOf(store);
  checkName("team", name, "tm_");
  const names = checkMembers(members);
  const id = newId("team");
  const at = iso();
  try {
    await store.tx(async () => {
      await db.run("INSERT INTO teams (id, name, created_at) VALUES (?, ?, ?)", [id, name, at]);
      for (const m of names) await db.run("INSERT INTO team_members (team_id, name, joined_at) VALUES (?, ?, ?)", [id, m, at]);
    });
  } catch (err: any) {
    if (isUniqueViolation(err))
      throw new LiError("conflict", `a team named ${name} already exists; pick another name`, { name });
    throw err;
  }
  return (await db.get<TeamRow>("SELECT * FROM teams WHERE id = ?", [id]))!;
}

/** A team by name, by id, or by an unambiguous id prefix (tm_…). */
export function resolveTeam(store: Store, text: string): Promise<TeamRow> {
  return rowByNameOrIdPrefix<TeamRow>(store, "teams", text);
}

function members(store: Store, teamId: string): Promise<MemberRow[]> {
  return dbOf(store).all<MemberRow>("SELECT * FROM team_members WHERE team_id = ? ORDER BY name", [teamId]);
}

async function requireMember(store: Store, team: TeamRow, name: string, flag: string): Promise<MemberRow> {
  const m = await dbOf(store).get<MemberRow>("SELECT * FROM team_members WHERE team_id = ? AND name = ?", [team.id, name]);
  if (!m) {
    const known = (await members(store, team.id)).map((r) => r.name);
    throw invalid(`${flag} ${name}: not a member of team ${team.name} (members: ${known.join(", ")})`, { field: flag.replace(/^--/, ""), name, team: team.name, members: known });
  }
  return m;
}

/** Messages addressed to `member`: sent to it by name, or to everyone by someone else. */
const ADDRESSED = "team_id = ? AND (recipient = ? OR (recipient IS NULL AND sender <> ?))";

export async function listTeams(store: Store) {
  const db = dbOf(store);
  const teams = await db.all<TeamRow>("SELECT * FROM teams ORDER BY name");
  const out = [];
  for (const t of teams) {
    const names = (await members(store, t.id)).map((m) => m.name);
    const stats = (await db.get<{ n: number; last: string | null }>("SELECT count(*) AS n, max(created_at) AS last FROM messages WHERE team_id = ?", [t.id]))!;
    out.push({ id: t.id, name: t.name, members: names, member_count: names.length, message_count: stats.n, last_message_at: stats.last, created_at: t.created_at });
  }
  return out;
}

export async function showTeam(store: Store, team: TeamRow) {
  const db = dbOf(store);
  const n = async (sql: string, params: unknown[]) => (await db.get<{ n: number }>(sql, params))!.n;
  const rows = [];
  for (const m of await members(store, team.id)) {
    rows.push({
      name: m.name,
      joined_at: m.joined_at,
      sent: await n("SELECT count(*) AS n FROM messages WHERE team_id = ? AND sender = ?", [team.id, m.name]),
      received: await n(`SELECT count(*) AS n FROM messages WHERE ${ADDRESSED}`, [team.id, m.name, m.name]),
      unread: await n(`SELECT count(*) AS n FROM messages WHERE ${ADDRESSED} AND seq > ?`, [team.id, m.name, m.name, m.read_seq]),
      read_through: m.read_seq ? ((await db.get<{ id: string }>("SELECT id FROM messages WHERE seq = ?", [m.read_seq]))?.id ?? null) : null,
      read_at: m.read_at,
    });
  }
  const total = await n("SELECT count(*) AS n FROM messages WHERE team_id = ?", [team.id]);
  return { team: { id: team.id, name: team.name, created_at: team.created_at }, members: rows, message_count: total };
}

/** The newest `limit` messages of a team, oldest first. */
export async function recentMessages(store: Store, team: TeamRow, limit: number): Promise<MessageView[]> {
  const rows = await dbOf(store).all<MessageRow>("SELECT * FROM messages WHERE team_id = ? ORDER BY seq DESC LIMIT ?", [team.id, limit]);
  return rows.reverse().map(messageView);
}

/** The body as given: refused when empty, over the cap, or holding a NUL byte. */
export function checkBody(body: string): string {
  if (body.trim() === "") throw invalid("the message body is empty; pass body words or --body-file PATH", { field: "body" });
  const bytes = Buffer.byteLength(body);
  if (bytes > BODY_CAP_BYTES) throw invalid(`the message body is ${bytes} bytes; the cap is ${BODY_CAP_BYTES} bytes (64 KiB)`, { field: "body", bytes, cap: BODY_CAP_BYTES });
  if (body.includes("\0")) throw invalid("the message body contains a NUL byte", { field: "body" });
  return body;
}

export function sendMessage(store: Store, team: TeamRow, from: string, to: string, body: string) {
  checkBody(body);
  const db = dbOf(store);
  return store.tx(async () => {
    await requireMember(store, team, from, "--from");
    const broadcast = to === BROADCAST;
    if (!broadcast) await requireMember(store, team, to, "--to");
    const id = newId("message");
    await db.run("INSERT INTO messages (id, team_id, sender, recipient, body, created_at) VALUES (?, ?, ?, ?, ?, ?)", [id, team.id, from, broadcast ? null : to, body, iso()]);
    const row = (await db.get<MessageRow>("SELECT * FROM messages WHERE id = ?", [id]))!;
    const recipients = broadcast ? (await members(store, team.id)).map((m) => m.name).filter((n) => n !== from) : [to];
    return { message: messageView(row), team: team.name, recipients };
  });
}

async function messageSeq(store: Store, team: TeamRow, text: string): Promise<number> {
  const key = text.trim().toLowerCase();
  const rows = key.startsWith("msg_")
    ? await dbOf(store).all<{ seq: number; id: string }>("SELECT seq, id FROM messages WHERE team_id = ? AND id >= ? AND id < ? ORDER BY id LIMIT 11", [team.id, key, key + "\u{10ffff}"])
    : [];
  if (rows.length === 1) return rows[0].seq;
  if (rows.length > 1) throw invalid(`--since ${text} matches ${rows.length > 10 ? "more than 10" : rows.length} messages; give more of the id`, { field: "since", matches: rows.slice(0, 10).map((r) => r.id) });
  throw new LiError("not_found", `--since ${text}: no message in team ${team.name} has that id (ids look like msg_01j…)`, { field: "since", since: text, team: team.name });
}

/**
 * Messages addressed to `as`, oldest first, after its read cursor (or after `since`). Unless
 * `peek`, the cursor moves forward to the last one returned (never back), in the same
 * transaction as the read.
 */
export function receiveMessages(store: Store, team: TeamRow, as: string, opts: { since?: string; limit: number; peek: boolean }) {
  const db = dbOf(store);
  return store.tx(async () => {
    const member = await requireMember(store, team, as, "--as");
    const from = opts.since !== undefined ? await messageSeq(store, team, opts.since) : member.read_seq;
    const rows = await db.all<MessageRow>(`SELECT * FROM messages WHERE ${ADDRESSED} AND seq > ? ORDER BY seq LIMIT ?`, [team.id, as, as, from, opts.limit]);
    const last = rows.length ? rows[rows.length - 1].seq : from;
    const remaining = (await db.get<{ n: number }>(`SELECT count(*) AS n FROM messages WHERE ${ADDRESSED} AND seq > ?`, [team.id, as, as, last]))!.n;
    let readSeq = member.read_seq;
    if (!opts.peek && last > member.read_seq) {
      readSeq = last;
      await db.run("UPDATE team_members SET read_seq = ?, read_at = ? WHERE team_id = ? AND name = ?", [last, iso(), team.id, as]);
    }
    const readThrough = readSeq ? ((await db.get<{ id: string }>("SELECT id FROM messages WHERE seq = ?", [readSeq]))?.id ?? null) : null;
    return { team: team.name, member: as, messages: rows.map(messageView), count: rows.length, remaining, read_through: readThrough, peek: opts.peek };
  });
}
