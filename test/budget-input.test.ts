/**
 * Issue 36, budget input, black-box: amounts are decimal digits (no hex, exponent or sign), a
 * dollar limit is never smaller than the smallest amount li shows, a refusal quotes what it was
 * sent bounded, and a timezone is stored as the tz database names it.
 */
import { rows, useHomes, type Home } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";

const home = useHomes();
const budget = (h: Home, args: string[]) => li(["--machine", "budget", ...args], { env: h.env });

test("amounts other than decimal digits are refused by field, and nothing is written", async () => {
  const h = home();
  const bad: [string[], string][] = [
    [["--limit-tokens", "0x10"], "limit_tokens"],
    [["--limit-tokens", "1e3"], "limit_tokens"],
    [["--limit-tokens", " 16"], "limit_tokens"],
    [["--limit-usd", "1e-9"], "limit_usd"],
    [["--limit-usd", "0x10"], "limit_usd"],
    [["--limit-usd", "0.000000001"], "limit_usd"],
    [["--limit-usd", "0.00001"], "limit_usd"],
    [["--limit-usd", "0.0000"], "limit_usd"],
    [["--limit-usd", "Infinity"], "limit_usd"],
    [["--limit-usd", "1", "--reserve-per-run", "1e-1"], "reserve_per_run"],
    [["--limit-tokens", "100", "--reserve-per-run", "0.5"], "reserve_per_run"],
  ];
  for (const [args, field] of bad) {
    const r = await budget(h, ["set", "b", "--scope", "all", ...args]);
    expect([args, r.code, r.json?.error?.kind, r.json?.error?.detail?.field]).toEqual([args, 2, "invalid_input", field]);
  }
  expect(await rows(h, "SELECT name FROM budgets")).toEqual([]);
  // The smallest dollar amount li shows is a limit, listed as set.
  await liData(["budget", "set", "tiny", "--limit-usd", "0.0001", "--scope", "all"], { env: h.env });
  const listed = await li(["budget", "list"], { env: h.env });
  expect(listed.stdout).toMatch(/tiny .*\$0\.0001/);
  expect((await liData(["budget", "list"], { env: h.env })).budgets[0]).toMatchObject({ name: "tiny", limit: 0.0001 });
});

test("a refusal quotes a long input by its first 64 characters and its length, never whole", async () => {
  const h = home();
  const long = "n".repeat(5000);
  const cases: string[][] = [
    ["set", long, "--limit-usd", "1", "--scope", "all"],
    ["set", "b", "--limit-usd", long, "--scope", "all"],
    ["set", "b", "--limit-usd", "1", "--scope", long],
    ["set", "b", "--limit-usd", "1", "--scope", `label:x`, "--timezone", long],
    ["set", "b", "--limit-usd", "1", "--scope", "all", "--per", long],
    ["show", long],
  ];
  for (const args of cases) {
    const r = await budget(h, args);
    expect([args.slice(0, 2), r.json?.ok]).toEqual([args.slice(0, 2), false]);
    expect(r.json.error.message).toContain(`"${"n".repeat(64)}"… (5000 characters)`);
    expect(r.stdout.length + r.stderr.length).toBeLessThan(2000);
    const human = await li(["budget", ...args], { env: h.env });
    expect(human.stderr).toContain("(5000 characters)");
    expect(human.stderr.length).toBeLessThan(1000);
  }
});

test("a timezone is stored as the tz database names it", async () => {
  const h = home();
  for (const [typed, canonical] of [
    ["utc", "UTC"],
    ["europe/berlin", "Europe/Berlin"],
    ["AMERICA/NEW_YORK", "America/New_York"],
  ]) {
    const set = await liData(["budget", "set", "b", "--limit-usd", "1", "--scope", "all", "--per", "day", "--timezone", typed], { env: h.env });
    expect([typed, set.budget.timezone]).toEqual([typed, canonical]);
    expect((await liData(["budget", "show", "b"], { env: h.env })).budget.timezone).toBe(canonical);
  }
  expect(await rows(h, "SELECT timezone FROM budgets")).toEqual([{ timezone: "America/New_York" }]);
});
