import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { runOp } from "../src/mcp/dispatcher.js";
import { catalog, verbHelp } from "../src/mcp/help.js";
import { commandAt } from "../src/mcp/projector.js";
import { VerbRegistry } from "../src/mcp/registry.js";
import { createSurface } from "../src/cli/mcp-surface.js";
import { Surface } from "../src/mcp/surface.js";
import { verb, verbMeta, type Verb } from "../src/mcp/verb.js";
import { VERBS } from "../verbs/index.js";
import { ROOT } from "./helpers/li.js";

const RESULT = { type: "object" };
let constructed = 0;

@verb({ id: "demo.read", effects: [], requiresFingerprint: false, cliPath: ["demo", "read"], summary: "demo", result: RESULT, synonyms: [{ name: "demo_read", retiresOn: "2026-09-30" }] })
class DemoRead implements Verb {
  constructor() {
    constructed++;
  }
}

@verb({ id: "demo.read", effects: [], requiresFingerprint: false, cliPath: ["demo", "other"], summary: "dup", result: RESULT })
class DemoDuplicate implements Verb {}

@verb({ id: "demo.broken", effects: [], requiresFingerprint: false, cliPath: ["demo", "broken"], summary: "optional-value option", result: RESULT })
class DemoBroken implements Verb {}

const fenced = (cliPath: string[]) => {
  @verb({ id: `fenced.${cliPath.join("_")}`, effects: ["writes_records"], requiresFingerprint: false, cliPath, summary: "x", result: RESULT })
  class Fenced implements Verb {}
  return Fenced;
};

function demoProgram(): Command {
  const root = new Command("li");
  const demo = root.command("demo");
  demo.command("read").option("--limit <n>");
  demo.command("broken").option("--maybe [v]", "optional value");
  return root;
}

describe("registry", () => {
  test("a duplicate id throws", () => {
    expect(() => new VerbRegistry().register(DemoRead).register(DemoDuplicate)).toThrow(/demo.read is registered twice/);
  });

  test.each([["state", "migrate"], ["plugin", "trust"], ["hooks", "trust"], ["HOOKS", "Trust"], ["team", "trust"], ["db", "migrate"]])(
    "a verb whose cliPath is fenced (%s %s) throws at registration",
    (...cliPath) => {
      expect(() => new VerbRegistry().register(fenced(cliPath))).toThrow(/fenced/);
    },
  );

  test("metadata is read up front; an instance is built only when dispatched", async () => {
    constructed = 0;
    const registry = new VerbRegistry().register(DemoRead);
    const surface = new Surface(registry, async () => demoProgram());
    await catalog(surface);
    await verbHelp(surface, "demo.read");
    expect(constructed).toBe(0);
    registry.instance("demo.read");
    expect(constructed).toBe(1);
  });

  test("retirement date is data: the v1 name resolves before it and is retired from it (injected clock)", () => {
    const registry = new VerbRegistry().register(DemoRead);
    expect(registry.lookup("demo_read", new Date("2026-09-29T23:59:59Z"))).toMatchObject({ kind: "verb", via: "demo_read", meta: { id: "demo.read" } });
    expect(registry.lookup("demo_read", new Date("2026-09-30T00:00:00Z"))).toMatchObject({ kind: "retired", replacement: "demo.read", retiredOn: "2026-09-30" });
    expect(registry.lookup("demo.read", new Date("2030-01-01"))).toMatchObject({ kind: "verb" });
  });

  test("dispatch before the retirement date runs the replacement verb", async () => {
    const registry = new VerbRegistry().register(DemoRead);
    const before = new Surface(registry, async () => demoProgram(), () => new Date("2026-09-01"));
    const after = new Surface(registry, async () => demoProgram(), () => new Date("2026-10-01"));
    // Before: resolved to demo.read and validated against its schema (so the typo is caught there).
    const early: any = await runOp(before, { op: "demo_read", args: { limt: 1 } });
    expect(early.error).toMatchObject({ code: "invalid_args", params: ["limt"] });
    expect(((await runOp(after, { op: "demo_read", args: {} })) as any).error).toMatchObject({ code: "retired_verb", replacement: "demo.read" });
  });

  test("the catalog lists no synonyms; an unprojectable verb is listed unavailable and its ops get verb_unavailable", async () => {
    const registry = new VerbRegistry().register(DemoRead).register(DemoBroken);
    const surface = new Surface(registry, async () => demoProgram());
    const help = await catalog(surface);
    expect(help.catalog.map((c) => c.verb)).toEqual(["demo.read"]);
    expect(help.catalog[0].signature).toBe("demo.read(…) — demo");
    expect(help.unavailable).toEqual([{ verb: "demo.broken", reason: expect.stringContaining("--maybe") }]);
    const r: any = await runOp(surface, { op: "demo.broken", args: {} });
    expect(r.error.code).toBe("verb_unavailable");
    expect(r.error.message).toContain("--maybe");
  });
});

describe("effects are the policy key, and the category follows from them", () => {
  test.each([
    [["spawns"], "spawn"],
    [["spawns_later", "writes_records"], "spawn"],
    [["signals"], "control"],
    [["runs_handlers"], "control"],
    [["reaps", "reads_files"], "read"],
    [[], "read"],
  ] as const)("%j is %s", (effects, category) => {
    @verb({ id: "demo.fx", effects: [...effects], requiresFingerprint: false, cliPath: ["demo", "read"], summary: "x", result: RESULT })
    class Fx implements Verb {}
    expect(verbMeta(Fx)!.category).toBe(category);
  });

  test("a declared category that disagrees with the effects is refused at definition", () => {
    expect(() => verb({ id: "demo.lie", effects: ["spawns_later"], category: "control", requiresFingerprint: true, cliPath: ["x"], summary: "x", result: RESULT })).toThrow(/effects \(spawns_later\) make it spawn/);
  });

  test("every registered verb: schedule.create stores a spawn for later and is a spawn verb; read verbs only read, reap or read named files", () => {
    const metas = VERBS.map((v) => verbMeta(v)!);
    const by = Object.fromEntries(metas.map((m) => [m.id, m]));
    expect(by["schedule.create"]).toMatchObject({ category: "spawn", requiresFingerprint: true, effects: expect.arrayContaining(["spawns_later"]) });
    expect(by["schedule.trigger"]).toMatchObject({ category: "spawn", requiresFingerprint: true });
    expect(by["dispatch.retry"].effects).toContain("runs_handlers");
    expect(by["job.kill"].effects).toEqual(expect.arrayContaining(["signals", "runs_handlers"]));
    for (const m of metas.filter((m) => m.category === "read")) expect([m.id, m.effects.filter((e) => e !== "reaps" && e !== "reads_files")]).toEqual([m.id, []]);
  });
});

describe("one broken verb never takes down the call", () => {
  test("commander internals changing shape under one command make that verb alone unavailable, naming the cause", async () => {
    const real = await createSurface();
    const broken = new Surface(real.registry, async () => {
      const root = await real.root();
      // As if a commander upgrade renamed the field the projector reads, for one command.
      Object.defineProperty(commandAt(root, ["stats"]), "options", { get: () => undefined });
      return root;
    });
    const c = await catalog(broken);
    expect(c.unavailable).toEqual([
      { verb: "stats", reason: expect.stringMatching(/projector failed on this command \(TypeError: /) },
    ]);
    expect(c.catalog.map((e: any) => e.verb)).toContain("job.status");
    expect(c.catalog.map((e: any) => e.verb)).not.toContain("stats");
    const r: any = await runOp(broken, { op: "stats", args: {} });
    expect(r.error).toMatchObject({ code: "verb_unavailable", reason: expect.stringMatching(/TypeError/) });
    expect(((await verbHelp(broken, "job.status")) as any).schema).toBeDefined();
  });
});

describe("the core knows no individual verb", () => {
  test("no registered verb id or v1 name appears in src/", async () => {
    const surface = await createSurface();
    const names = surface.registry.all().flatMap((m) => [m.id, ...(m.synonyms ?? []).map((s) => s.name)]);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith(".ts")) files.push(p);
      }
    };
    walk(path.join(ROOT, "src"));
    // A one-word verb (monitor, stats) is named after the command it runs, and the CLI must
    // spell its own command names; anywhere else in src/ the name is still a hit.
    const commandNames = new Set(surface.registry.all().filter((m) => m.cliPath.length === 1 && m.cliPath[0] === m.id).map((m) => m.id));
    const hits = files.flatMap((f) => {
      const text = fs.readFileSync(f, "utf8");
      const inCli = path.relative(ROOT, f).startsWith(path.join("src", "cli") + path.sep);
      return names
        .filter((n) => !(inCli && commandNames.has(n)))
        .filter((n) => text.includes(`"${n}"`) || text.includes(`'${n}'`))
        .map((n) => `${path.relative(ROOT, f)}: ${n}`);
    });
    expect(hits).toEqual([]);
  });

  test("the composition root registers exactly the verb classes in verbs/<noun>/<action>.ts, each once", async () => {
    const files = fs
      .readdirSync(path.join(ROOT, "verbs"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => fs.readdirSync(path.join(ROOT, "verbs", d.name)).filter((f) => f.endsWith(".ts")).map((f) => path.join(ROOT, "verbs", d.name, f)));
    const classes = [];
    for (const f of files) classes.push(...Object.values(await import(f)).filter((v) => typeof v === "function"));
    expect(new Set(VERBS).size).toBe(VERBS.length);
    expect([...classes].sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual([...VERBS].sort((a, b) => a.name.localeCompare(b.name)));
  });
});
