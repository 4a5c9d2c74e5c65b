import fs from "node:fs";
import path from "node:path";
import { li, ROOT, tempHome } from "./helpers/li.js";

/*
 * Help that keeps up (issue 40 §4): every page of the studio's router, and every view a run's
 * page adds, is named in `li studio --help`; every top-level command `li --help` lists has a docs
 * page, linked from the README's table of links by a row that names the command.
 */

const h = tempHome();
afterAll(() => h.cleanup());

async function help(words: string[]): Promise<string> {
  const r = await li([...words, "--help"], { env: h.env });
  if (r.code !== 0) throw new Error(`li ${words.join(" ")} --help exited ${r.code}: ${r.stderr}`);
  return r.stdout.replace(/\s+/g, " ");
}

const source = (rel: string) => fs.readFileSync(path.join(ROOT, rel), "utf8");

/** The routes of the page's router (app.tsx's Page): each first segment, and whether it also routes one item of it (`&& b`). */
function routes(app: string): { segment: string; item: boolean }[] {
  const body = /function Page\([^]*?\n}\n/.exec(app)?.[0] ?? "";
  return [...body.matchAll(/if \(a === "([\w-]+)"( && b)?\)/g)].map((m) => ({ segment: m[1], item: !!m[2] }));
}

/** What the help must say for each view of a run's page (its change_view values), by value. */
const VIEW_WORDS: Record<string, string> = { run: "an isolated run's change", fanout: "a fan-out's comparison" };

test("li studio --help names every page of the studio's router and every view of a run's page", async () => {
  const text = await help(["studio"]);
  const found = routes(source("src/studio/web/app.tsx"));
  // The parse sees the router (a change of its shape fails here rather than checking nothing).
  expect(found.map((r) => r.segment)).toEqual(expect.arrayContaining(["runs", "schedules", "teams", "budgets", "outbox"]));
  const missing: string[] = [];
  for (const { segment, item } of found) {
    // A list page by its name; a page of one item as "each run's", "each team's".
    const words = item ? `each ${segment.replace(/s$/, "")}'s` : segment;
    if (!new RegExp(`\\b${words}\\b`, "i").test(text)) missing.push(`#/${segment}${item ? "/ID" : ""}: "${words}"`);
  }
  const runPage = source("src/studio/web/run-page.tsx");
  const views = [...runPage.matchAll(/change_view === "([\w-]+)"/g)].map((m) => m[1]);
  expect(views.length).toBeGreaterThan(0);
  for (const v of views) {
    const words = VIEW_WORDS[v] ?? `(a new view "${v}": name it in li studio --help and in VIEW_WORDS here)`;
    if (!text.includes(words)) missing.push(`the run page's ${v} view: "${words}"`);
  }
  if (/has_graph/.test(runPage) && !text.includes("as a graph")) missing.push(`the run page's graph: "as a graph"`);
  expect(missing).toEqual([]);
});

/** The top-level commands `li --help` lists. */
function commands(text: string): string[] {
  const block = /\nCommands:\n([^]*?)\n\n/.exec(text)?.[1] ?? "";
  return [...block.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((c) => c !== "help");
}

test("every top-level command of li --help has a docs page, linked from a row of the README's table that names it", async () => {
  const r = await li(["--help"], { env: h.env });
  const listed = commands(r.stdout);
  expect(listed).toEqual(expect.arrayContaining(["agent", "job", "studio", "mcp"]));
  const rows = source("README.md").split("\n").filter((l) => l.startsWith("| ["));
  const missing: string[] = [];
  for (const c of listed) {
    const names = new RegExp(`\\bli ${c}\\b`);
    // A row that names `li C`, and a docs page it links that describes `li C`.
    const found = rows.some((row) => {
      const prose = row.replace(/\]\([^)]*\)/g, "]");
      if (!names.test(prose)) return false;
      return [...row.matchAll(/\]\((docs\/[\w-]+\.md)(?:#[\w-]*)?\)/g)].some((m) => names.test(source(m[1])));
    });
    if (!found) missing.push(`li ${c}`);
  }
  expect(missing).toEqual([]);
});
