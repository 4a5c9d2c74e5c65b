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
    expect(lines[0]).toMatch(/^0 of 2 terminal, \d+\.\ds elapsed$/);
    expect(lines).toContainEqual(expect.stringMatching(/^1 of 2 terminal/));
    expect(lines.at(-1)).toMatch(/^2 of 2 terminal/);
    // The result table is on stdout, one row per id.
    expect(r.stdout).toContain(a.id);
    expect(r.stdout).toContain(b.id);
    expect(r.stdout).toMatch(/all_terminal=true timed_out=false/);
  } finally {
    h.cleanup();
  }
});
