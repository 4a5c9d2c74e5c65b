import { mapSeq } from "../lifecycle/seq.js";
import { deliveryCounts, deliveryView, listDeliveries } from "../lifecycle/notify/outbox.js";
import { listRuns, listSchedules, runCount, scheduleView } from "../lifecycle/schedules/store.js";
import type { Store } from "../lifecycle/store.js";
import { listTeams, recentMessages, resolveTeam, showTeam } from "../lifecycle/teams.js";

/* The schedules, teams and outbox pages' reads: the CLI's own machine views, never a write. */

const RECENT_RUNS = 5;
const TEAM_MESSAGES = 200;
const OUTBOX_PAGE = 200;

export async function schedulesPage(store: Store) {
  return {
    schedules: await mapSeq(await listSchedules(store), async (row) => ({
      ...scheduleView(row, { runs: await runCount(store, row.id) }),
      recent_runs: await mapSeq(await listRuns(store, row.id, RECENT_RUNS), async (r) => {
        const e = r.entity_id ? (await store.get(r.entity_id)) : undefined;
        return { id: r.id, trigger: r.trigger, due_at: r.due_at, fired_at: r.fired_at, entity_id: r.entity_id, status: e?.status ?? null, error: r.error };
      }),
    })),
  };
}

export const teamsPage = async (store: Store) => ({ teams: await listTeams(store) });

/** A team with its newest messages, oldest first. Reading moves no member's read cursor (unlike li team receive). */
export async function teamPage(store: Store, name: string) {
  const team = await resolveTeam(store, name);
  return { ...(await showTeam(store, team)), messages: await recentMessages(store, team, TEAM_MESSAGES) };
}

export async function outboxPage(store: Store, status: string[] | undefined) {
  const counts = await deliveryCounts(store);
  const p = await listDeliveries(store, { status, limit: OUTBOX_PAGE });
  return { deliveries: p.rows.map((r) => deliveryView(r)), counts, total: p.total };
}
