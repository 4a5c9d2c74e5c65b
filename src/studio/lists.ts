import { deliveryCounts, deliveryView, listDeliveries } from "../lifecycle/notify/outbox.js";
import { listRuns, listSchedules, runCount, scheduleView } from "../lifecycle/schedules/store.js";
import type { Store } from "../lifecycle/store.js";
import { listTeams, messageView, resolveTeam, showTeam } from "../lifecycle/teams.js";

/* The schedules, teams and outbox pages' reads: the CLI's own machine views, never a write. */

const RECENT_RUNS = 5;
const TEAM_MESSAGES = 200;
const OUTBOX_PAGE = 200;

export function schedulesPage(store: Store) {
  return {
    schedules: listSchedules(store).map((row) => ({
      ...scheduleView(row, { runs: runCount(store, row.id) }),
      recent_runs: listRuns(store, row.id, RECENT_RUNS).map((r) => {
        const e = r.entity_id ? store.get(r.entity_id) : undefined;
        return { id: r.id, trigger: r.trigger, due_at: r.due_at, fired_at: r.fired_at, entity_id: r.entity_id, status: e?.status ?? null, error: r.error };
      }),
    })),
  };
}

export const teamsPage = (store: Store) => ({ teams: listTeams(store) });

/** A team with its newest messages, oldest first. Reading moves no member's read cursor (unlike li team receive). */
export function teamPage(store: Store, name: string) {
  const team = resolveTeam(store, name);
  const rows = store.db.prepare("SELECT * FROM messages WHERE team_id = ? ORDER BY seq DESC LIMIT ?").all(team.id, TEAM_MESSAGES) as Parameters<typeof messageView>[0][];
  return { ...showTeam(store, team), messages: rows.reverse().map(messageView) };
}

export function outboxPage(store: Store, status: string[] | undefined) {
  const counts = deliveryCounts(store.db);
  const p = listDeliveries(store.db, { status, limit: OUTBOX_PAGE });
  return { deliveries: p.rows.map((r) => deliveryView(r)), counts, total: p.total };
}
