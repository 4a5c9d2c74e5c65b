import fs from "node:fs";
import path from "node:path";
import { Command, Option } from "commander";
import { integerArg, intIn, numberArg, numberIn } from "../src/cli/parsers.js";
import { renderArgv } from "../src/mcp/argv.js";
import { commandAt, project, ProjectionError } from "../src/mcp/projector.js";
import { createSurface } from "../src/cli/mcp-surface.js";
import { ROOT } from "./helpers/li.js";

const GOLDEN = path.join(ROOT, "test", "golden");

describe("golden schemas: a parser change fails here instead of silently changing a schema", () => {
  test("every registered verb projects exactly its golden schema", async () => {
    const surface = await createSurface();
    const ids = surface.registry.all().map((m) => m.id);
    expect(ids.length).toBeGreaterThan(0);
    for (const meta of surface.registry.all()) {
      const p = await surface.projection(meta);
      if (!p.ok) throw new Error(`${meta.id} is unavailable: ${p.reason}`);
      const file = path.join(GOLDEN, `${meta.id}.schema.json`);
      // Regenerate deliberately with UPDATE_GOLDEN=1 after a reviewed parser change.
      if (process.env.UPDATE_GOLDEN) {
        fs.writeFileSync(file, JSON.stringify(p.projection.schema, null, 2) + "\n");
        continue;
      }
      expect([meta.id, p.projection.schema]).toEqual([meta.id, JSON.parse(fs.readFileSync(file, "utf8"))]);
    }
    if (process.env.UPDATE_GOLDEN) throw new Error("golden schemas rewritten; review the diff and rerun without UPDATE_GOLDEN");
    // No stale golden files for verbs that no longer exist.
    const files = fs.readdirSync(GOLDEN).filter((f) => f.endsWith(".schema.json")).map((f) => f.replace(/\.schema\.json$/, ""));
    expect(files.sort()).toEqual([...ids].sort());
  });

  test("property names follow the mechanical rule", async () => {
    const surface = await createSurface();
    const wait = await surface.projection(surface.registry.get("job.wait")!);
    const agent = await surface.projection(surface.registry.get("agent.submit")!);
    if (!wait.ok || !agent.ok) throw new Error("unavailable");
    expect(Object.keys(wait.projection.schema.properties).sort()).toEqual(["all_active", "ids", "label", "max_wait_seconds", "poll_interval_seconds"]);
    expect(agent.projection.schema.properties.prompt_file).toEqual(expect.objectContaining({ type: "string" }));
    // The model is optional: a profile or a resumed run can supply it.
    expect(agent.projection.schema.required).toBeUndefined();
  });
});

describe("commander internals the projector reads (gate 1: walk registered subcommands)", () => {
  test("the registered command tree and option/argument fields keep their shape", async () => {
    const surface = await createSurface();
    const root = await surface.root();
    expect(Array.isArray(root.commands)).toBe(true);
    const wait = commandAt(root, ["wait"]);
    expect(wait.name()).toBe("wait");
    expect(Array.isArray(wait.registeredArguments)).toBe(true);
    const opt = wait.options.find((o) => o.long === "--max-wait-seconds")!;
    for (const field of ["long", "short", "required", "optional", "variadic", "mandatory", "negate", "defaultValue", "parseArg", "hidden", "argChoices", "envVar", "presetArg", "conflictsWith"])
      expect(field in opt).toBe(true);
    expect(opt.parseArg).toBe(numberArg);
    const arg = wait.registeredArguments[0];
    // Optional since --label and --all-active can name what to wait for instead.
    expect([arg.name(), arg.required, arg.variadic]).toEqual(["ids", false, true]);
    expect(commandAt(root, ["job", "status"]).name()).toBe("status");
    // Live views for a terminal are never offered as parameters.
    const output = await surface.projection(surface.registry.get("job.output")!);
    const monitor = await surface.projection(surface.registry.get("monitor")!);
    if (!output.ok || !monitor.ok) throw new Error("unavailable");
    expect(Object.keys(output.projection.schema.properties)).not.toContain("follow");
    expect(Object.keys(monitor.projection.schema.properties)).not.toEqual(expect.arrayContaining(["watch"]));
    expect(Object.keys(monitor.projection.schema.properties)).not.toContain("interval");
    expect(() => commandAt(root, ["job", "nope"])).toThrow(ProjectionError);
  });
});

describe("bounded translation", () => {
  const leaf = () => new Command("x");

  test("scalars, parsers by identity, booleans, negation, choices, variadics, required, defaults, conflicts", () => {
    const cmd = leaf()
      .argument("<first>", "a positional")
      .argument("[rest...]", "more")
      .option("-n, --count <n>", "an integer", integerArg, 3)
      .option("--ratio <r>", "a number", numberArg)
      .option("--name <s>", "a string")
      .option("--tag <t...>", "repeatable")
      .option("--color", "on")
      .option("--no-color", "off")
      .option("--no-cache", "lone negation")
      .addOption(new Option("--mode <m>").choices(["a", "b"]).conflicts("name"))
      .requiredOption("--must <m>", "mandatory");
    const { schema, bindings } = project(cmd);
    expect(schema).toEqual({
      type: "object",
      additionalProperties: false,
      required: ["must", "first"],
      allOf: [{ not: { required: ["mode", "name"] } }],
      properties: {
        first: { type: "string", description: "a positional" },
        rest: { type: "array", items: { type: "string" }, description: "more" },
        count: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description: "an integer", default: 3 },
        ratio: { type: "number", description: "a number" },
        name: { type: "string", description: "a string" },
        tag: { type: "array", items: { type: "string" }, minItems: 1, description: "repeatable" },
        color: { type: "boolean", description: "on" },
        cache: { type: "boolean", description: "lone negation", default: true },
        mode: { type: "string", enum: ["a", "b"] },
        must: { type: "string", description: "mandatory" },
      },
    });
    const argv = renderArgv(bindings, { first: "--help", rest: ["-x", "y"], count: 5, tag: ["a", "b"], color: false, cache: false, must: "m" });
    expect(argv).toEqual(["--count=5", "--tag=a", "--tag=b", "--no-color", "--no-cache", "--must=m", "--", "--help", "-x", "y"]);
  });

  test("a parser's declared range is the schema's range, so the two cannot disagree", () => {
    const cmd = leaf().option("--n <n>", "", intIn(1, 32)).option("--s <s>", "", numberIn(0, 600)).option("--t <t>", "", numberIn(0, 9, { above: true }));
    const { schema } = project(cmd);
    expect(schema.properties).toEqual({
      n: { type: "integer", minimum: 1, maximum: 32 },
      s: { type: "number", minimum: 0, maximum: 600 },
      t: { type: "number", exclusiveMinimum: 0, maximum: 9 },
    });
    const parse = (argv: string[]) => leaf().exitOverride().configureOutput({ writeErr: () => {} }).option("--n <n>", "", intIn(1, 32)).parse(argv, { from: "user" }).opts().n;
    expect(parse(["--n", "32"])).toBe(32);
    expect(() => parse(["--n", "33"])).toThrow(/from 1 to 32/);
    expect(() => parse(["--n", "1e+21"])).toThrow(/integer/);
  });

  test("every numeric option of every verb declares both bounds, and no timer can overflow", async () => {
    const surface = await createSurface();
    const loose: string[] = [];
    for (const meta of surface.registry.all()) {
      const p = await surface.projection(meta);
      if (!p.ok) continue;
      for (const [k, v] of Object.entries<any>(p.projection.schema.properties)) {
        const item = v.type === "array" ? v.items : v;
        // job.wait's two numbers are clamped by the CLI (the contract), so any number is legal there.
        if ((item.type === "integer" || item.type === "number") && meta.cliPath.join(" ") !== "wait" && (item.maximum === undefined || (item.minimum === undefined && item.exclusiveMinimum === undefined)))
          loose.push(`${meta.id}.${k}`);
        if (item.type === "number" && /seconds|grace|timeout/.test(k) && item.maximum !== undefined) expect([k, item.maximum * 1000 <= 2 ** 31 - 1 || k === "timeout"]).toEqual([k, true]);
      }
    }
    expect(loose).toEqual([]);
  });

  test("fixed server-owned flags never appear in the schema but always render", () => {
    const cmd = leaf().option("--detach", "bg").option("--label <l>");
    const { schema, bindings } = project(cmd, ["--detach"]);
    expect(Object.keys(schema.properties)).toEqual(["label"]);
    expect(renderArgv(bindings, { label: "x" }, ["--detach"])).toEqual(["--label=x", "--detach"]);
  });

  const unmodellable: [string, () => Command, RegExp][] = [
    ["an optional-value option", () => leaf().option("--opt [v]"), /--opt.*optional value/],
    ["an unknown parser function", () => leaf().option("--f <v>", "", (v: string) => v.toUpperCase()), /--f.*value parser/],
    ["a nested subcommand", () => { const c = leaf(); c.command("sub"); return c; }, /subcommands/],
    ["a hidden option", () => leaf().addOption(new Option("--secret <s>").hideHelp()), /--secret.*hidden/],
    ["an env-backed option", () => leaf().addOption(new Option("--token <t>").env("TOKEN")), /--token.*TOKEN/],
    ["a preset option", () => leaf().addOption(new Option("--level <n>").preset("3")), /--level.*preset/],
    ["an unknown argument parser", () => leaf().argument("<n>", "", (v: string) => Number(v)), /<n>.*value parser/],
    // commander would keep only the last value: an array schema would lie.
    ["a variadic option with a value parser", () => leaf().option("--n <n...>", "", integerArg), /--n is variadic with a value parser/],
    ["a variadic argument with a value parser", () => leaf().argument("<n...>", "", numberArg), /<n> is variadic with a value parser/],
  ];
  test.each(unmodellable)("%s makes the verb unavailable, naming the option", (_n, make, pattern) => {
    expect(() => project(make())).toThrow(pattern);
  });

  test("the lie is real: commander hands a variadic parser each value, and ours keep only the last", () => {
    const cmd = leaf().option("--n <n...>", "", integerArg).exitOverride();
    cmd.parse(["--n", "1", "2", "3"], { from: "user" });
    expect(cmd.opts().n).toBe(3);
  });
});
