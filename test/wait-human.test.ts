import { li, liData, tempHome } from "./helpers/li.js";

test("human li wait shows live progress on stderr, with no escape codes when stderr is not a TTY", async () => {
  const h = tempHome();
  try {
    const a = await liData(["agent", "--detach", "mock/sleep:2", "a"], { env: h.env });
    const b = await liData(["agent", "--detach", "mock/sleep:4", "b"], { env: h.env });
    const r = await li(["wait", a.id, b.id, "--poll-interval-seconds", "0.2", "--max-wait-seconds", "20"], { env: h.env });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/\x1b/);
    const lines = r.stderr.trim().split("\n");
    // Progress names what is still pending, by the short ids the tables show.
    expect(lines[0]).toMatch(/^0 of 2 terminal, \d+\.\ds elapsed; waiting on inv_\w+, inv_\w+$/);
    expect(a.id.startsWith(lines[0].split("waiting on ")[1].split(", ")[0])).toBe(true);
    expect(lines).toContainEqual(expect.stringMatching(/^1 of 2 terminal/));
    expect(lines.at(-1)).toMatch(/^2 of 2 terminal/);
    // The result table is on stdout, one row per id, each by its shortest unambiguous prefix.
    const shown = r.stdout.split("\n").slice(1, 3).map((l) => l.split(/\s+/)[0]);
    expect([a.id.startsWith(shown[0]), b.id.startsWith(shown[1]), shown[0].length < a.id.length]).toEqual([true, true, true]);
    expect(r.stdout).toMatch(/all_terminal=true timed_out=false/);
  } finally {
    h.cleanup();
  }
});

test("human li wait keeps its exit table for shell scripts; --machine exits 0 on every ok result", async () => {
  const h = tempHome();
  try {
    const done = await liData(["agent", "--detach", "mock/echo", "a"], { env: h.env });
    const failed = await liData(["agent", "--detach", "mock/fail:4", "b"], { env: h.env });
    const hang = await liData(["agent", "--detach", "mock/sleep:30", "c"], { env: h.env });
    await li(["wait", done.id, failed.id, "--max-wait-seconds", "20", "--poll-interval-seconds", "0.2"], { env: h.env });
    const cases: [string[], number][] = [
      [[done.id], 0],
      [[done.id, failed.id], 1],
      [[done.id, "inv_0000000000zz"], 2],
      [[hang.id, "--max-wait-seconds", "0.5", "--poll-interval-seconds", "0.1"], 3],
    ];
    for (const [args, human] of cases) {
      expect([args, (await li(["wait", ...args], { env: h.env })).code]).toEqual([args, human]);
      const machine = await li(["--machine", "wait", ...args], { env: h.env });
      expect([args, machine.code, machine.json.ok]).toEqual([args, 0, true]);
    }
    await li(["kill", "--grace", "0", hang.id], { env: h.env });
  } finally {
    h.cleanup();
  }
});
