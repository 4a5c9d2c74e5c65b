import { newId } from "../src/lifecycle/ids.js";

/*
 * Record ids: ULID-shaped (time, then randomness from the kernel's device), sortable by time, and
 * monotonic within one process even when several are made in one millisecond.
 */
const SHAPE = /^inv_[0-9a-hjkmnp-tv-z]{26}$/;

test("an id is its kind's prefix, 10 characters of time and 16 of randomness, and sorts by its time", () => {
  const a = newId("invocation", Date.UTC(2026, 0, 1));
  const b = newId("invocation", Date.UTC(2026, 0, 2));
  expect(a).toMatch(SHAPE);
  expect(b).toMatch(SHAPE);
  expect(a < b).toBe(true);
  expect(newId("approval")).toMatch(/^apr_/);
});

test("ids made in one millisecond rise strictly; ids of different milliseconds draw fresh randomness", () => {
  // Later than any id made before in this process (an earlier time would continue its sequence).
  const now = Date.now() + 86_400_000;
  const same = Array.from({ length: 500 }, () => newId("invocation", now));
  expect([...same].sort()).toEqual(same);
  expect(new Set(same).size).toBe(same.length);
  // 200 milliseconds, 200 random parts: a repeat among 16 base-32 characters would mean no randomness.
  const parts = Array.from({ length: 200 }, (_, i) => newId("invocation", now + 1 + i).slice(14));
  expect(new Set(parts).size).toBe(parts.length);
  // Every character of the alphabet shows up somewhere in 3,200 random characters.
  expect(new Set(parts.join("")).size).toBe(32);
});
