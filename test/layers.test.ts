import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers/li.js";

/*
 * The layer rules, held over the import edges of src/ and verbs/ (static imports, re-exports and
 * literal dynamic imports), so that they hold from now on rather than by review.
 */

type Edge = { from: string; to: string; dynamic: boolean; typeOnly: boolean };

function files(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? files(rel) : rel.endsWith(".ts") ? [rel] : [];
  });
}

const SOURCES = [...files("src"), ...files("verbs")];

/** The relative import edges of one file's text. */
function scan(from: string, text: string): Edge[] {
  const out: Edge[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']|(typeof\s+)?import\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of text.matchAll(pattern)) {
    const spec = m[1] ?? m[3];
    if (!spec.startsWith(".")) continue;
    // A type-only import (`import type`, `typeof import(...)`) is erased: it loads nothing, but it is still structure.
    const typeOnly = m[2] !== undefined || /^\s*(?:import|export)\s+type\s/.test(m[0].replace(/^\n/, ""));
    const to = path.normalize(path.join(path.dirname(from), spec)).replace(/\.js$/, ".ts");
    out.push({ from, to, dynamic: m[3] !== undefined && m[2] === undefined, typeOnly });
  }
  return out;
}

function edges(): Edge[] {
  return SOURCES.flatMap((from) => scan(from, fs.readFileSync(path.join(ROOT, from), "utf8")));
}

const ALL = edges();
const under = (file: string, dir: string) => file.startsWith(dir.endsWith("/") ? dir : dir + "/") || file === dir;

test("the edge scan sees the known edges (a broken scan would pass every rule)", () => {
  expect(ALL.length).toBeGreaterThan(200);
  expect(ALL).toContainEqual({ from: "src/cli/registry.ts", to: "src/cli/commands/mcp.ts", dynamic: true, typeOnly: false });
  expect(ALL).toContainEqual(expect.objectContaining({ from: "verbs/index.ts", to: "src/mcp/registry.ts" }));
  expect(ALL).toContainEqual({ from: "src/mcp/surface-module.ts", to: "src/mcp/call.ts", dynamic: false, typeOnly: true });
  expect(ALL).toContainEqual({ from: "src/cli/mcp-surface.ts", to: "src/cli/program.ts", dynamic: true, typeOnly: false });
});

test("the edge scan sees a type-level import(...) as a type-only edge: a circle through one is still a circle", () => {
  expect(scan("src/mcp/a.ts", 'type M = typeof import("./b.js");\nconst n = await import("../cli/c.js");\n')).toEqual([
    { from: "src/mcp/a.ts", to: "src/mcp/b.ts", dynamic: false, typeOnly: true },
    { from: "src/mcp/a.ts", to: "src/cli/c.ts", dynamic: true, typeOnly: false },
  ]);
});

test("src/config (settings, profiles, trust, policy, endpoints) is a layer below the CLI, MCP and studio: it never reaches them", () => {
  const config = SOURCES.filter((f) => under(f, "src/config"));
  expect(config.map((f) => path.basename(f)).sort()).toEqual(
    ["acp-agents.ts", "approval-settings.ts", "check-settings.ts", "code-files.ts", "endpoints.ts", "policy.ts", "price-settings.ts", "profile-limits.ts", "profiles.ts", "project-dirs.ts", "project-profiles.ts", "project-trust.ts", "provider-state.ts", "queue-settings.ts", "sandbox-fields.ts", "sandbox-home.ts", "sandbox-limits.ts", "sandbox-settings.ts", "settings-fields.ts", "settings.ts", "trust-store.ts", "user-prices.ts", "worktree-settings.ts"],
  );
  // Only neutral modules, lifecycle's vocabulary and paths, and the provider table a profile is checked against.
  const allowed = (to: string) =>
    under(to, "src/config") ||
    ["src/errors.ts", "src/json.ts", "src/packages.ts"].includes(to) ||
    ["names", "paths", "vocab", "locate"].some((n) => to === `src/lifecycle/${n}.ts`) ||
    ["capabilities", "index", "types"].some((n) => to === `src/runtime/providers/${n}.ts`);
  expect(ALL.filter((e) => under(e.from, "src/config") && !allowed(e.to))).toEqual([]);
  // Configuration modules sit in their folder, not loose at the root of src/.
  const loose = fs.readdirSync(path.join(ROOT, "src")).filter((f) => f.endsWith(".ts"));
  expect(loose.sort()).toEqual(["build-id.ts", "entrypoints.ts", "errors.ts", "json.ts", "packages.ts", "version.ts"]);
});

test("src/mcp sees only itself, the CLI's parser builders and a few neutral modules: never lifecycle or runtime", () => {
  const allowed = (to: string) =>
    under(to, "src/mcp") ||
    under(to, "src/cli/builders") ||
    ["src/cli/commander.ts", "src/cli/parsers.ts", "src/cli/server-seam.ts", "src/errors.ts", "src/packages.ts", "src/entrypoints.ts", "src/build-id.ts", "src/version.ts", "src/config/policy.ts", "verbs/index.ts"].includes(to);
  expect(ALL.filter((e) => under(e.from, "src/mcp") && !allowed(e.to))).toEqual([]);
});

test("verbs/ sees only verbs/, src/mcp, the CLI's parser builders and errors", () => {
  const allowed = (to: string) => under(to, "verbs") || under(to, "src/mcp") || under(to, "src/cli/builders") || to === "src/errors.ts";
  expect(ALL.filter((e) => under(e.from, "verbs") && !allowed(e.to))).toEqual([]);
});

test("the server never loads the code that starts runs: no path of static imports from src/mcp or verbs/ reaches it", () => {
  const forbidden = (f: string) => f === "src/runtime/submit/spawn.ts" || f === "src/runtime/submit/submit.ts" || f === "src/lifecycle/store.ts" || /-worker\.ts$/.test(f) || under(f, "src/cli/commands") || under(f, "src/runtime/providers");
  const seen = new Set<string>();
  const reached: string[] = [];
  const queue = SOURCES.filter((f) => under(f, "src/mcp") || under(f, "verbs"));
  while (queue.length) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    if (forbidden(f)) reached.push(f);
    for (const e of ALL) if (e.from === f && !e.dynamic && !e.typeOnly) queue.push(e.to);
  }
  expect(reached).toEqual([]);
});

test("src/studio reads through lifecycle and the CLI's views, and never reaches the code that starts or changes runs", () => {
  // Every change the studio makes is a li subprocess (src/studio/actions.ts): no second write path.
  const starts = ["spawn", "submit", "queue", "rerun", "play-submit", "schedule-fire", "resume"].map((n) => `src/runtime/${n}.ts`);
  const forbidden = (f: string) => starts.includes(f) || /-worker\.ts$/.test(f) || under(f, "src/cli/commands") || under(f, "src/mcp") || ["src/lifecycle/kill.ts", "src/lifecycle/clean.ts"].includes(f);
  const seen = new Set<string>();
  const reached: string[] = [];
  const queue = SOURCES.filter((f) => under(f, "src/studio"));
  while (queue.length) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    if (forbidden(f)) reached.push(f);
    for (const e of ALL) if (e.from === f && !e.typeOnly) queue.push(e.to);
  }
  expect(reached).toEqual([]);
});

test("li studio's server is a bundle of its own: the CLI reaches it only by type, and its page imports nothing outside src/studio/web", () => {
  expect(ALL.filter((e) => !under(e.from, "src/studio") && under(e.to, "src/studio") && !e.typeOnly)).toEqual([]);
  const web = fs.readdirSync(path.join(ROOT, "src/studio/web")).filter((f) => /\.tsx?$/.test(f));
  expect(web.length).toBeGreaterThan(5);
  const foreign = web.flatMap((f) =>
    [...fs.readFileSync(path.join(ROOT, "src/studio/web", f), "utf8").matchAll(/^\s*(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm)]
      .map((m) => m[1] ?? m[2])
      .filter((spec) => !spec.startsWith("./") && !/^(preact|@dagrejs\/dagre|diff2html)(\/|$)/.test(spec))
      .map((spec) => `${f}: ${spec}`),
  );
  expect(foreign).toEqual([]);
});

test("the core never imports verbs/ except through the composition root", () => {
  expect(ALL.filter((e) => under(e.from, "src") && under(e.to, "verbs") && !(e.from === "src/mcp/compose.ts" && e.to === "verbs/index.ts"))).toEqual([]);
});

test("no import circle, static, dynamic or type-only", () => {
  const next = new Map<string, string[]>();
  for (const e of ALL) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components: any with more than one file is a circle.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) circles.push(scc.sort());
    }
  };
  for (const f of SOURCES) if (!idx.has(f)) visit(f);
  expect(circles).toEqual([]);
});

test("only src/lifecycle reaches the store's SQL: nothing else imports the driver, the SQL backend or the connection handle", () => {
  // The SQL interface, its SQLite backend (the one module importing better-sqlite3) and the symbol a Store keeps its
  // connection under all live in src/lifecycle/db; callers get lifecycle functions (issue 19: a second backend slots in there).
  const sqlModules = (to: string) => under(to, "src/lifecycle/db");
  const reached = ALL.filter((e) => !under(e.from, "src/lifecycle") && sqlModules(e.to) && !e.typeOnly);
  expect(reached).toEqual([]);
  const driver = SOURCES.filter((f) => /from\s+["']better-sqlite3["']|import\(\s*["']better-sqlite3["']\s*\)|require\(\s*["']better-sqlite3["']\s*\)/.test(fs.readFileSync(path.join(ROOT, f), "utf8")));
  // Type-only imports of the driver (read-only.ts, sqlite-file.ts) load nothing; the backend is the one real import.
  const runtime = driver.filter((f) => /^\s*import\s+(?!type\b)[^;]*from\s+["']better-sqlite3["']/m.test(fs.readFileSync(path.join(ROOT, f), "utf8")));
  expect(runtime).toEqual(["src/lifecycle/db/sqlite.ts"]);
  expect(driver.filter((f) => !under(f, "src/lifecycle"))).toEqual([]);
  // A Store has no raw connection to read: its SQL handle sits under a symbol only src/lifecycle/db exports.
  const store = fs.readFileSync(path.join(ROOT, "src/lifecycle/store.ts"), "utf8");
  expect(store).not.toMatch(/\b(readonly|public)\s+db\b|\bdb\s*:\s*Database/);
  // The check can fail: an edge of that shape is seen.
  expect(scan("src/cli/x.ts", 'import { dbOf } from "../lifecycle/db/handle.js";\n').filter((e) => sqlModules(e.to))).toHaveLength(1);
});
