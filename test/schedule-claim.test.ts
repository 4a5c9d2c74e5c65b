/**
 * The firing claim at the store level, deterministic where the CLI race test is statistical:
 * two handles that both read the same due time race to claim it, and exactly one records a run.
 */
import { claimDue, getSchedule, insertSchedule, listRuns, setEnabled } from "../src/lifecycle/schedules/store.js";
import { openStore } from "../src/lifecycle/open.js";
import type { Store } from "../src/lifecycle/store.js";
import { tempHome } from "./helpers/li.js";

let h: ReturnType<typeof tempHome>;
let a: Store;
let b: Store;

beforeEach(async () => {
  h = tempHome();
  process.env.LI_HOME = h.home;
  a = await openStore();
  b = await openStore();
});

afterEach(async () => {
  await a.close();
  await b.close();
  h.cleanup();
});

const DUE = "2020-01-01T00:00:00.000Z";
const NEXT = "2099-01-01T00:00:00.000Z";

function schedule(store: Store) {
  return insertSchedule(store, { name: "s", cron: "* * * * *", timezone: "UTC", model: "mock/echo", prompt: "p", label: null, spec: { cwd: "/" }, next_run_at: DUE, enabled: true });
}

test("of two claimants that read the same due time, one wins and records; the other records nothing", async () => {
  const s = await schedule(a);
  const recorded: string[] = [];
  const first = await claimDue(a, s.id, DUE, NEXT, new Date(), () => (recorded.push("a"), { error: "a" }));
  const second = await claimDue(b, s.id, DUE, NEXT, new Date(), () => (recorded.push("b"), { error: "b" }));
  expect(first).toMatchObject({ schedule_id: s.id, trigger: "tick", due_at: DUE, error: "a" });
  expect(second).toBeNull();
  expect(recorded).toEqual(["a"]);
  expect(await listRuns(a, s.id, 10)).toHaveLength(1);
  expect(await getSchedule(b, s.id)).toMatchObject({ next_run_at: NEXT });
});

test("a claim whose record step throws leaves the due time unclaimed and nothing written", async () => {
  const s = await schedule(a);
  await expect(
    claimDue(a, s.id, DUE, NEXT, new Date(), () => {
      throw new Error("disk full");
    }),
  ).rejects.toThrow("disk full");
  expect(await getSchedule(a, s.id)).toMatchObject({ next_run_at: DUE, last_fired_at: null });
  expect(await listRuns(a, s.id, 10)).toEqual([]);
});

test("a schedule disabled after it was read is not fired", async () => {
  const s = await schedule(a);
  await setEnabled(b, s.id, false, () => NEXT);
  expect(await claimDue(a, s.id, DUE, NEXT, new Date(), () => ({ error: "x" }))).toBeNull();
  expect(await listRuns(a, s.id, 10)).toEqual([]);
});
