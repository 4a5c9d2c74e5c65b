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

beforeEach(() => {
  h = tempHome();
  process.env.LI_HOME = h.home;
  a = openStore();
  b = openStore();
});

afterEach(() => {
  a.close();
  b.close();
  h.cleanup();
});

const DUE = "2020-01-01T00:00:00.000Z";
const NEXT = "2099-01-01T00:00:00.000Z";

function schedule(store: Store) {
  return insertSchedule(store, { name: "s", cron: "* * * * *", timezone: "UTC", model: "mock/echo", prompt: "p", label: null, spec: { cwd: "/" }, next_run_at: DUE, enabled: true });
}

test("of two claimants that read the same due time, one wins and records; the other records nothing", () => {
  const s = schedule(a);
  const recorded: string[] = [];
  const first = claimDue(a, s.id, DUE, NEXT, new Date(), () => (recorded.push("a"), { error: "a" }));
  const second = claimDue(b, s.id, DUE, NEXT, new Date(), () => (recorded.push("b"), { error: "b" }));
  expect(first).toMatchObject({ schedule_id: s.id, trigger: "tick", due_at: DUE, error: "a" });
  expect(second).toBeNull();
  expect(recorded).toEqual(["a"]);
  expect(listRuns(a, s.id, 10)).toHaveLength(1);
  expect(getSchedule(b, s.id)).toMatchObject({ next_run_at: NEXT });
});

test("a claim whose record step throws leaves the due time unclaimed and nothing written", () => {
  const s = schedule(a);
  expect(() =>
    claimDue(a, s.id, DUE, NEXT, new Date(), () => {
      throw new Error("disk full");
    }),
  ).toThrow("disk full");
  expect(getSchedule(a, s.id)).toMatchObject({ next_run_at: DUE, last_fired_at: null });
  expect(listRuns(a, s.id, 10)).toEqual([]);
});

test("a schedule disabled after it was read is not fired", () => {
  const s = schedule(a);
  setEnabled(b, s.id, false, () => NEXT);
  expect(claimDue(a, s.id, DUE, NEXT, new Date(), () => ({ error: "x" }))).toBeNull();
  expect(listRuns(a, s.id, 10)).toEqual([]);
});
