/**
 * Foundation (issue 2): concurrency. Detached runs submitted at once against a fresh LI_HOME (so
 * their processes also race to create and migrate state.db) all reach `completed`, and nothing
 * anywhere reports SQLITE_BUSY. Fifty runs and six rounds of openers in the stress tier
 * (test/helpers/stress.ts); npm test's sixteen runs and two rounds still race (see below).
 */
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { SCHEMA_VERSION } from "../src/lifecycle/schema.js";
import { rows } from "./helpers/fixtures.js";
import { ROOT, li, tempHome } from "./helpers/li.js";
import { stressCount } from "./helpers/stress.js";

// On PostgreSQL too, a database without li's schema: they all race to create it. Sixteen
// submissions started at once are sixteen writers (and as many workers) in the same second, far
// more than a writer without a busy wait, or a migration that is not one transaction, survives.
const RUNS = stressCount(16, 50);
// Each round staggers the openers by a different fraction of a millisecond.
const ROUNDS = stressCount(2, 6);
const h = tempHome({ emptyStore: true });
afterAll(() => h.cleanup());

const BUSY = /SQLITE_BUSY|database is locked|SQLITE_|already exists/i;

test(`${RUNS} detached mock/sleep:0.2 runs submitted at once all reach terminal completed, with no SQLITE_BUSY anywhere`, async () => {
  expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
  const subs = await Promise.all(
    Array.from({ length: RUNS }, (_, i) => li(["--machine", "agent", "--detach", "mock/sleep:0.2", `run-${i}`], { env: h.env, timeoutMs: 90000 })),
  );
  for (const r of subs) {
    expect(`${r.stdout}${r.stderr}`).not.toMatch(BUSY);
    expect(r.code).toBe(0);
    expect(r.json?.ok).toBe(true);
  }
  const ids: string[] = subs.map((r) => r.json.data.id);
  expect(new Set(ids).size).toBe(RUNS);

  const w = await li(["--machine", "wait", ...ids, "--max-wait-seconds", "50", "--poll-interval-seconds", "0.5"], { env: h.env, timeoutMs: 90000 });
  expect(w.stderr).not.toMatch(BUSY);
  expect(w.json?.ok).toBe(true);
  const res = w.json.data;
  expect(res.timed_out).toBe(false);
  expect(res.all_terminal).toBe(true);
  expect(res.terminal).toHaveLength(RUNS);
  expect(res.entries.map((e: any) => [e.status, e.reason_code])).toEqual(ids.map(() => ["completed", "invocation.completed.exit_zero"]));
  expect(w.code).toBe(0);

  // Every console log holds exactly its own prompt (no worker wrote an error there).
  subs.forEach((r, i) => {
    const text = fs.readFileSync(r.json.data.console_log, "utf8");
    expect(text).not.toMatch(BUSY);
    expect(text).toBe(`run-${i}`);
  });

  // And the store agrees: one record per run, each with exactly its two audit rows, from the runtime.
  expect(await rows(h, "SELECT status, count(*) AS n FROM entities GROUP BY status")).toEqual([{ status: "completed", n: RUNS }]);
  const paths = new Map<string, string[]>();
  for (const e of await rows(h, "SELECT entity_id, to_status, source FROM events ORDER BY id")) paths.set(e.entity_id, [...(paths.get(e.entity_id) ?? []), `${e.to_status}/${e.source}`]);
  expect(paths.size).toBe(RUNS);
  for (const p of paths.values()) expect(p.join(" ")).toBe("running/runtime completed/runtime");
}, 120000);

/** One process opening the store (built code) at a shared instant; prints ok or the error. */
const OPENER = `
import { openStore } from ${JSON.stringify(path.join(ROOT, "dist/src/lifecycle/open.js"))};
const at = Number(process.argv[1]);
while (performance.timeOrigin + performance.now() < at) {}
try {
  const s = await openStore();
  const v = await s.schemaVersion();
  await s.close();
  process.stdout.write("ok " + v);
} catch (err) {
  process.stdout.write("error " + (err && err.message));
}
`;

function open(env: NodeJS.ProcessEnv, at: number): Promise<string> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--input-type=module", "-e", OPENER, String(at)], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", () => resolve(out));
  });
}

test("processes opening a fresh state.db within the same few milliseconds all see the current schema (never a half-migrated one)", async () => {
  // Staggered by fractions of a millisecond, so some open while another is mid-way through creating the schema.
  for (let round = 0; round < ROUNDS; round++) {
    const r = tempHome({ emptyStore: true });
    try {
      const at = Date.now() + 500;
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => open(r.env, at + i * (0.4 + round * 0.3))));
      expect(results).toEqual(results.map(() => `ok ${SCHEMA_VERSION}`));
    } finally {
      r.cleanup();
    }
  }
}, 60000);
