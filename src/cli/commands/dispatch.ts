import { Command, Option } from "../commander.js";
import { startDrainer } from "../../lifecycle/notify/hook.js";
import {
  ackDelivery,
  DELIVERY_STATUSES,
  deliveryView,
  listDeliveries,
  PURGEABLE,
  purgeDeliveries,
  resolveDelivery,
  retryDelivery,
  type DeliveryView,
} from "../../lifecycle/notify/outbox.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { ago } from "../human-time.js";
import { pageData, pageFooter } from "../list-options.js";
import { LIMITS, numberIn, pageLimitArg } from "../parsers.js";
import { renderWithStore } from "../views.js";

const DISPATCH_PAGE = 50;
const COLUMNS = ["id", "status", "handler", "event", "entity_id", "attempts", "max_attempts", "next_attempt_at", "last_error"];
const one = (d: DeliveryView) => keyValues(d as unknown as Record<string, unknown>);

export function register(root: Command, ctx: CliContext): void {
  const dispatch = root
    .command("dispatch")
    .description("the terminal-notify outbox: one delivery per handler per terminal transition")
    .addHelpText(
      "after",
      `
Every terminal transition enqueues one delivery per matching notify.on_terminal handler, in
the transition's own transaction. A detached drainer runs each (exec: argv with the envelope
on stdin; webhook: POST), retrying with exponential backoff up to notify.retry.max_attempts.
A budget crossing 80% or 100% of its limit enqueues one per handler whose kinds name
budget.threshold (event budget.threshold; its entity is the run whose spend crossed).
Statuses: pending, delivering, delivered, failed (attempts used up), acked (handled by hand).`,
    );

  dispatch
    .command("list")
    .description("deliveries, newest first")
    .addOption(new Option("--status <status...>", "only these statuses").choices(DELIVERY_STATUSES as string[]))
    .option("--entity <id>", "only deliveries for this entity (id or unambiguous prefix)")
    .option("--cursor <cursor>", "start after the previous page: its next_cursor, with the same filters")
    .option("--limit <n>", `at most N deliveries per page (${LIMITS.page} at most)`, pageLimitArg, DISPATCH_PAGE)
    .action((opts: { status?: string[]; entity?: string; cursor?: string; limit: number }) =>
      renderWithStore(ctx, async (store) => {
        const entity = opts.entity ? (await resolve(store, opts.entity)).id : undefined;
        const p = await listDeliveries(store, { status: opts.status, entity, cursor: opts.cursor, limit: opts.limit });
        const deliveries = p.rows.map((r) => deliveryView(r));
        const extra = [...(entity ? ["--entity", entity] : [])];
        const footer = pageFooter(p, "li dispatch list", { status: opts.status, limit: opts.limit }, {}, DISPATCH_PAGE, extra);
        return {
          data: { deliveries, ...pageData(p) },
          human: (d: { deliveries: DeliveryView[] }) =>
            [table(d.deliveries.map((x) => ({ ...x, next_attempt_at: ago(x.next_attempt_at) })), COLUMNS), footer].filter(Boolean).join("\n"),
        };
      }),
    );

  dispatch
    .command("show")
    .description("one delivery with its target and the envelope it carries")
    .argument("<id>", "delivery id or unambiguous prefix (dlv_…)")
    .action((id: string) =>
      renderWithStore(ctx, async (store) => {
        const delivery = deliveryView((await resolveDelivery(store, id)), true);
        return { data: { delivery }, human: (d: { delivery: DeliveryView }) => one(d.delivery) };
      }),
    );

  dispatch
    .command("retry")
    .description("send a failed (or stalled pending) delivery again with a fresh attempt budget, now")
    .argument("<id>", "delivery id or unambiguous prefix (dlv_…)")
    .action((id: string) =>
      renderWithStore(ctx, async (store) => {
        const row = await retryDelivery(store, (await resolveDelivery(store, id)).id);
        const drainer_started = startDrainer();
        const data = { delivery: deliveryView(row), drainer_started };
        return { data, human: (d: typeof data) => `${d.delivery.id} is pending again${d.drainer_started ? "; a drainer is sending it" : ""}` };
      }, { write: true }),
    );

  dispatch
    .command("ack")
    .description("mark a delivery handled: no further attempts are made")
    .argument("<id>", "delivery id or unambiguous prefix (dlv_…)")
    .action((id: string) =>
      renderWithStore(ctx, async (store) => {
        const { row, previous } = await ackDelivery(store, (await resolveDelivery(store, id)).id);
        const data = { delivery: deliveryView(row), previous_status: previous };
        return { data, human: (d: typeof data) => `${d.delivery.id}: ${d.previous_status} → acked` };
      }, { write: true }),
    );

  dispatch
    .command("purge")
    .description("delete finished deliveries (default: delivered and acked)")
    .addOption(new Option("--status <status...>", "which finished statuses to delete").choices(PURGEABLE as string[]))
    .option("--older-than <seconds>", "only those last updated at least this many seconds ago (up to 10 years)", numberIn(0, 10 * 365 * 24 * 3600), 0)
    .addHelpText("after", "\nPending and in-flight deliveries are never purged; failed ones only when --status failed is given.")
    .action((opts: { status?: string[]; olderThan: number }) =>
      renderWithStore(ctx, async (store) => {
        const statuses = opts.status?.length ? opts.status : ["delivered", "acked"];
        const purged = await purgeDeliveries(store, statuses, opts.olderThan);
        const data = { purged, count: purged.length, statuses, older_than_seconds: opts.olderThan };
        return { data, human: (d: typeof data) => `purged ${d.count} deliver${d.count === 1 ? "y" : "ies"} (${d.statuses.join(", ")})` };
      }, { write: true }),
    );
}
