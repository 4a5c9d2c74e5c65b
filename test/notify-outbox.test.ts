import type { Store } from "../src/lifecycle/store.js";
import { ackDelivery, backoffMs, claimDue, finishAttempt, insertDelivery, MAX_DELAY_MS, nextDueMs, resolveDelivery, type Target } from "../src/lifecycle/notify/outbox.js";
import { parseSettings } from "../src/config/settings.js";
import { openStore } from "./helpers/fixtures.js";
import { tempHome } from "./helpers/li.js";

/* The outbox's compare-and-set moves and the settings validator, in-process. */

const target: Target = { type: "webhook", url: "http://127.0.0.1:9/x", timeout_seconds: 1, backoff_seconds: 0.5, source: "user", file: "/x" };

async function withOutbox(fn: (store: Store, enqueue: (max?: number) => Promise<string>) => Promise<void>) {
  const t = tempHome();
  const saved = process.env.LI_HOME;
  const store = await openStore(t);
  try {
    const e = await store.insert({ kind: "invocation" });
    const r = await store.transition({ id: e.id, to: "failed", reason: "invocation.failed.test", source: "admin" });
    if (!r.ok) throw new Error("transition refused");
    await fn(store, (max = 3) => insertDelivery(store, { event_id: r.eventId, entity_id: e.id, handler: "h", target, payload: "{}", max_attempts: max }));
  } finally {
    await store.close();
    process.env.LI_HOME = saved;
    t.cleanup();
  }
}

test("a claim is exclusive; a lost drainer's lease is reclaimed, and its last attempt becomes failed", () =>
  withOutbox(async (store, enqueue) => {
    const id = await enqueue(2);
    const now = Date.now();
    const first = (await claimDue(store, now))!;
    expect(first.row.id).toBe(id);
    expect(await claimDue(store, now)).toBeNull();

    // The first drainer vanished: after its lease, another takes attempt 2; the first's late verdict is refused.
    const later = Date.parse(first.lease) + 1;
    const second = (await claimDue(store, later))!;
    expect(second.attempt).toBe(2);
    expect(await finishAttempt(store, first, { ok: true }, later)).toBeNull();

    // The second vanished too, on the final attempt: no third attempt, a visible failure.
    expect(await claimDue(store, Date.parse(second.lease) + 1)).toBeNull();
    expect(await resolveDelivery(store, id)).toMatchObject({ status: "failed", attempts: 2 });
  }));

test("a failed attempt is rescheduled with capped exponential backoff; an ack discards an in-flight verdict", () =>
  withOutbox(async (store, enqueue) => {
    const id = await enqueue(5);
    const now = Date.now();
    const c = (await claimDue(store, now))!;
    expect(await finishAttempt(store, c, { ok: false, error: "HTTP 500" }, now)).toBe("pending");
    expect(await nextDueMs(store)).toBe(now + 500);
    expect(await claimDue(store, now + 499)).toBeNull();
    expect([1, 2, 3].map((n) => backoffMs(0.5, n))).toEqual([500, 1000, 2000]);
    expect(backoffMs(50, 4)).toBe(MAX_DELAY_MS);

    const c2 = (await claimDue(store, now + 500))!;
    expect((await ackDelivery(store, id)).previous).toBe("delivering");
    expect(await finishAttempt(store, c2, { ok: true }, now + 600)).toBeNull();
    expect((await resolveDelivery(store, id.slice(0, 20))).status).toBe("acked");
  }));

test("exec strings with shell syntax are refused; plain strings split on whitespace", () => {
  const load = (exec: string) => parseSettings(Buffer.from(`notify: {on_terminal: [{name: h, exec: ${JSON.stringify(exec)}}]}`), "/s.yaml", "user");
  for (const ch of "|&;<>()$`\\\"'*?[]#~=%\n") expect(() => load(`/bin/echo a${ch}b`)).toThrow(/s\.yaml: notify\.on_terminal\[0\]\.exec: .*shell syntax/);
  expect(load("  /usr/bin/tee   -a /tmp/x ").handlers[0].exec).toEqual(["/usr/bin/tee", "-a", "/tmp/x"]);
  expect(() => parseSettings(Buffer.from("notify: {on_terminal: [{name: h, url: 'http://x', scope: some}]}"), "/s.yaml", "user")).toThrow(/scope/);
  expect(() => parseSettings(Buffer.from("providers: {openai: {base_url: 'http://127.0.0.1:8/v1/'}}"), "/s.yaml", "user")).toThrow(/s\.yaml: providers: .*endpoints/);
});
