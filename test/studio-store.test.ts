import { useHomes } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";
import { apiGet, expectKilledRunReaped, postAction, readyHang, sseLines, startStudio } from "./helpers/studio.js";

/*
 * li studio on either store (this suite runs in the sqlite and the postgres projects): the
 * first run of an empty store arrives live as a change event and reads back; a run whose
 * processes died is handed to li and reaped; an action is a li subprocess that reaches the same
 * store. On PostgreSQL the studio has no data_version to poll and reads the newest audit row id.
 */

const home = useHomes({ stopRuns: true });

test("on an empty store it answers empty lists, then the first run arrives live and its record reads back", async () => {
  const h = home();
  const s = await startStudio(h.env);
  try {
    expect(await apiGet(s, "/api/runs")).toEqual({ runs: [], next_cursor: null, total: 0 });
    const events = sseLines(s, "/api/stream");
    await until(() => events.text().includes("event: hello"), 10000);
    const run = await liData(["agent", "mock/echo", "first"], { env: h.env });
    await until(() => events.text().includes(`"entity_id":"${run.id}","from_status":"running","to_status":"completed"`), 15000);
    expect(events.text()).toMatch(/event: change/);
    expect((await apiGet(s, "/api/runs")).runs.map((r: any) => r.id)).toEqual([run.id]);
    const d = await apiGet(s, `/api/runs/${run.id}`);
    expect([d.run.status, d.events.at(-1).to_status]).toEqual(["completed", "completed"]);

    // A later run, on a store that already had one: the poll sees it too.
    const second = await liData(["agent", "mock/echo", "second"], { env: h.env });
    await until(() => events.text().includes(`"entity_id":"${second.id}","from_status":"running","to_status":"completed"`), 15000);
    events.close();
  } finally {
    await s.stop();
  }
});

test("a run killed -9 is handed to li and reaped to lost; a kill from the page is a li that reaches the same store", async () => {
  const h = home();
  // A store that exists before the studio starts: it opens it at once.
  await liData(["agent", "mock/echo", "warm"], { env: h.env });
  const s = await startStudio(h.env);
  try {
    await expectKilledRunReaped(s, h.env);

    const events = sseLines(s, "/api/stream");
    const hang = await readyHang(h);
    const r = await postAction(s, { action: "kill", target: hang.id });
    expect([r.status, r.json?.data?.result?.ok]).toEqual([200, true]);
    await until(() => events.text().includes(`"entity_id":"${hang.id}","from_status":"running","to_status":"cancelled"`), 15000);
    expect((await apiGet(s, `/api/runs/${hang.id}`)).run.status).toBe("cancelled");
    events.close();
  } finally {
    await s.stop();
  }
});
