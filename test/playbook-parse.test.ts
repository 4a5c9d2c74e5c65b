/**
 * Playbooks without processes: the file format, template rendering, the search order, and
 * the second-stage injection of declared args into a commander command (what both `li play`
 * and the MCP projector rely on).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Command } from "commander";
import { collectPlaybookArgs, injectPlaybookArgs, scanPlaybookName } from "../src/cli/builders/play-run.js";
import { integerArg, numberArg } from "../src/cli/parsers.js";
import { checkPlaybookName, parsePlaybook, renderPlan, renderPrompt } from "../src/runtime/playbooks/playbook.js";
import { listPlaybooks, resolvePlaybook } from "../src/runtime/playbooks/resolve.js";
import { refusal } from "./helpers/refusal.js";

const REVIEW = `
description: review a change
prompt: "Review {input} at depth {depth} (strict={strict}, tone {tone})"
model: mock/echo
workers: mock/echo, mock/sleep:0.1
max_concurrent: 2
synthesis: {model: mock/echo, prompt: "Summarise for a {tone} reader"}
args:
  depth: {type: int, default: 2, help: how deep to go}
  strict: {type: bool, help: fail on nits}
  tone: {type: str, choices: [formal, casual], required: true}
  ratio: {type: float}
  colour: {type: bool, default: true}
`;

describe("parsePlaybook", () => {
  test("reads every key and declaration", () => {
    const pb = parsePlaybook("review", REVIEW);
    expect(pb).toMatchObject({
      description: "review a change",
      model: "mock/echo",
      workers: ["mock/echo", "mock/sleep:0.1"],
      max_concurrent: 2,
      synthesis: { model: "mock/echo", prompt: "Summarise for a {tone} reader" },
    });
    expect(pb.args.map((a) => [a.name, a.type, a.required, a.default, a.choices])).toEqual([
      ["depth", "int", false, 2, null],
      ["strict", "bool", false, null, null],
      ["tone", "str", true, null, ["formal", "casual"]],
      ["ratio", "float", false, null, null],
      ["colour", "bool", false, true, null],
    ]);
  });

  test("every refusal names the playbook, and the arg where there is one", () => {
    expect(refusal(() => parsePlaybook("p", "promt: x"))).toBe('playbook p: unknown key "promt" (allowed: description, prompt, model, workers, max_concurrent, synthesis, profile, plan, args)');
    expect(refusal(() => parsePlaybook("p", "args: {n: {type: integer}}"))).toMatch(/^playbook p: arg n: type must be one of str, int, float, bool/);
    expect(refusal(() => parsePlaybook("p", "args: {n: {type: int, choices: [1, 2]}}"))).toBe("playbook p: arg n: choices are only for str args");
    expect(refusal(() => parsePlaybook("p", "args: {n: {type: int, required: true, default: 3}}"))).toMatch(/^playbook p: arg n: a required arg cannot have a default/);
    expect(refusal(() => parsePlaybook("p", "args: {n: {type: int, default: 2.5}}"))).toMatch(/^playbook p: arg n: default 2.5 is not a int/);
    expect(refusal(() => parsePlaybook("p", "args: {t: {choices: [a, b], default: c}}"))).toMatch(/^playbook p: arg t: default "c" is not one of the choices/);
    expect(refusal(() => parsePlaybook("p", "args: {Bad: {}}"))).toMatch(/^playbook p: arg Bad: the name must match/);
    expect(refusal(() => parsePlaybook("p", 'prompt: "do {thing}"'))).toMatch(/^playbook p: prompt uses \{thing\}, which is neither \{input\} nor a declared arg/);
    expect(refusal(() => parsePlaybook("p", "plan: {steps: [{id: a, task: t, depends_on: [a]}]}"))).toMatch(/^playbook p: plan: step a depends on itself/);
    expect(refusal(() => parsePlaybook("p", "- a list"))).toBe("playbook p: must be a YAML mapping");
  });

  test("names: no separators, no dot-dot, not the group's own words", () => {
    for (const bad of ["../x", "a/b", "a\\b", "..", "", "list", "show", "run"]) expect(() => checkPlaybookName(bad)).toThrow(/playbook name|reserved/);
    expect(checkPlaybookName("code-review.v2")).toBe("code-review.v2");
  });

  test("templates fill {input} and args; without {input} the input is appended", () => {
    const pb = parsePlaybook("review", REVIEW);
    expect(renderPrompt(pb, "review", "the diff", { depth: 3, strict: true, tone: "formal" })).toBe("Review the diff at depth 3 (strict=true, tone formal)");
    expect(refusal(() => renderPrompt(pb, "review", " ", {}))).toMatch(/^playbook review: its prompt uses \{input\}/);
    const bare = parsePlaybook("b", 'prompt: "Be brief."');
    expect(renderPrompt(bare, "b", "hello", {})).toBe("Be brief.\n\nhello");
    expect(renderPlan({ steps: [{ id: "a", task: "look at {input} {n}" }] }, { input: "X", n: 4 })).toEqual({ steps: [{ id: "a", task: "look at X 4" }] });
  });
});

function runCommand(): Command {
  const root = new Command("li").option("--machine");
  const play = root.command("play");
  return play
    .command("run")
    .argument("<name>")
    .argument("[prompt...]")
    .option("--model <model>")
    .option("--max-concurrent <n>", "", integerArg)
    .option("--notify <name...>")
    .option("--dry-run")
    .exitOverride();
}

describe("injectPlaybookArgs", () => {
  const pb = { name: "review", spec: parsePlaybook("review", REVIEW) };

  test("adds typed options: known parsers, choices, defaults, mandatory, negatable bool", () => {
    const cmd = runCommand();
    const added = injectPlaybookArgs(cmd, pb);
    expect(added.map((o) => o.flags)).toEqual(["--depth <n>", "--strict", "--tone <value>", "--ratio <x>", "--no-colour"]);
    const [depth, strict, tone, ratio, colour] = added;
    // The projector recognises parsers by identity.
    expect(depth.parseArg).toBe(integerArg);
    expect(ratio.parseArg).toBe(numberArg);
    expect(depth.defaultValue).toBe(2);
    expect(tone.argChoices).toEqual(["formal", "casual"]);
    expect(tone.mandatory).toBe(true);
    expect(strict.isBoolean()).toBe(true);
    expect(colour.negate).toBe(true);
    expect(cmd.helpInformation()).toMatch(/--tone <value> +tone \[playbook review arg, str, required\] \(choices:\s+"formal", "casual"\)/);
  });

  test("parses into the declared values", async () => {
    const cmd = runCommand();
    injectPlaybookArgs(cmd, pb);
    let seen: any;
    cmd.action((_n, _w, opts) => {
      seen = collectPlaybookArgs(opts, pb);
    });
    await cmd.parseAsync(["review", "--depth", "5", "--strict", "--tone", "casual", "--no-colour", "--ratio=0.5", "x"], { from: "user" });
    expect(seen).toEqual({ depth: 5, strict: true, tone: "casual", ratio: 0.5, colour: false });
    const again = runCommand();
    injectPlaybookArgs(again, pb);
    again.action((_n, _w, opts) => {
      seen = collectPlaybookArgs(opts, pb);
    });
    await again.parseAsync(["review", "--tone", "formal"], { from: "user" });
    expect(seen).toEqual({ depth: 2, strict: false, tone: "formal", ratio: null, colour: true });
  });

  test("a bad choice or a bad int is a parse error naming the option", async () => {
    const cmd = runCommand();
    injectPlaybookArgs(cmd, pb);
    cmd.action(() => {});
    cmd.configureOutput({ writeErr: () => {} });
    await expect(cmd.parseAsync(["review", "--tone", "rude"], { from: "user" })).rejects.toThrow(/--tone <value>' argument 'rude' is invalid\. Allowed choices are formal, casual/);
  });

  test("a collision with a built-in flag names the arg and the flag", () => {
    const clash = (yaml: string) => refusal(() => injectPlaybookArgs(runCommand(), { name: "p", spec: parsePlaybook("p", yaml) }));
    expect(clash("args: {model: {}}")).toBe("playbook p: arg model (--model) collides with the built-in flag --model <model>");
    expect(clash("args: {max_concurrent: {type: int}}")).toBe("playbook p: arg max_concurrent (--max-concurrent) collides with the built-in flag --max-concurrent <n>");
    expect(clash("args: {machine: {type: bool}}")).toBe("playbook p: arg machine (--machine) collides with the built-in flag --machine");
    expect(clash("args: {help: {type: bool}}")).toBe("playbook p: arg help (--help) collides with the built-in flag --help");
    expect(clash("args: {dry_run: {type: bool, default: true}}")).toMatch(/arg dry_run \(--dry-run\) collides with the built-in flag --dry-run/);
  });
});

describe("scanPlaybookName (the first stage)", () => {
  const cmd = runCommand();
  test.each([
    [["review", "--tone", "x"], "review"],
    [["--model", "mock/echo", "review"], "review"],
    [["--model=mock/echo", "--dry-run", "review", "words"], "review"],
    [["--notify", "a", "b", "--", "review"], "review"],
    [["--tone=casual", "--strict", "--", "review", "-weird"], "review"],
    [["--help"], undefined],
    [[], undefined],
  ])("%j → %s", (tokens, name) => expect(scanPlaybookName(tokens as string[], cmd)).toBe(name));

  test("an unknown option followed by a word is ambiguous, and says how to write it", () => {
    expect(refusal(() => scanPlaybookName(["--depth", "3", "review"], cmd))).toMatch(/put the name before playbook options .* or give a value as --depth=VALUE/);
  });
});

describe("resolvePlaybook and listPlaybooks", () => {
  let root: string;
  let liHome: string;
  const saved = process.env.LI_HOME;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "li-pb-"));
    liHome = path.join(root, "home");
    fs.mkdirSync(path.join(root, "repo", ".git"), { recursive: true });
    fs.mkdirSync(path.join(root, "repo", ".li", "playbooks"), { recursive: true });
    fs.mkdirSync(path.join(root, "repo", "pkg", ".li", "playbooks"), { recursive: true });
    fs.mkdirSync(path.join(root, "repo", "pkg", "deep"), { recursive: true });
    fs.mkdirSync(path.join(liHome, "playbooks"), { recursive: true });
    // Above the git root: must never be found from inside the repository.
    fs.mkdirSync(path.join(root, ".li", "playbooks"), { recursive: true });
    fs.writeFileSync(path.join(root, ".li", "playbooks", "outside.playbook.yaml"), "description: outside\n");
    fs.writeFileSync(path.join(root, "repo", ".li", "playbooks", "shared.playbook.yaml"), "description: repo root\n");
    fs.writeFileSync(path.join(root, "repo", "pkg", ".li", "playbooks", "shared.playbook.yaml"), "description: package\n");
    fs.writeFileSync(path.join(liHome, "playbooks", "shared.playbook.yaml"), "description: user\n");
    fs.writeFileSync(path.join(liHome, "playbooks", "mine.playbook.yaml"), "description: user only\n");
    fs.writeFileSync(path.join(liHome, "playbooks", "broken.playbook.yaml"), "bogus: 1\n");
    process.env.LI_HOME = liHome;
  });
  afterAll(() => {
    process.env.LI_HOME = saved;
    fs.rmSync(root, { recursive: true, force: true });
  });

  test("nearest project directory first, up to the git root, then $LI_HOME/playbooks", () => {
    const deep = path.join(root, "repo", "pkg", "deep");
    const pb = resolvePlaybook("shared", deep);
    expect(pb.spec.description).toBe("package");
    expect(pb.fingerprint).toBe("sha256:" + createHash("sha256").update(fs.readFileSync(pb.path)).digest("hex"));
    expect(pb.searched).toEqual([
      path.join(deep, ".li", "playbooks"),
      path.join(root, "repo", "pkg", ".li", "playbooks"),
      path.join(root, "repo", ".li", "playbooks"),
      path.join(liHome, "playbooks"),
    ]);
    expect(resolvePlaybook("shared", path.join(root, "repo")).spec.description).toBe("repo root");
    expect(resolvePlaybook("mine", deep).spec.description).toBe("user only");
  });

  test("missing: the refusal names the playbook and every place searched", () => {
    const deep = path.join(root, "repo", "pkg", "deep");
    const m = refusal(() => resolvePlaybook("outside", deep));
    expect(m).toContain("no playbook named outside");
    expect(m).toContain(path.join(root, "repo", ".li", "playbooks"));
    expect(m).toContain(path.join(liHome, "playbooks"));
    expect(refusal(() => resolvePlaybook("../outside", deep))).toMatch(/not a playbook name/);
  });

  test("list shows shadowing and broken files instead of failing", () => {
    const { playbooks } = listPlaybooks(path.join(root, "repo", "pkg"));
    const rows = playbooks.map((p) => [p.name, p.scope, p.description, p.shadowed_by ? "shadowed" : "", p.error ? "error" : ""]);
    expect(rows).toEqual([
      ["shared", "project", "package", "", ""],
      ["shared", "project", "repo root", "shadowed", ""],
      ["broken", "user", null, "", "error"],
      ["mine", "user", "user only", "", ""],
      ["shared", "user", "user", "shadowed", ""],
    ]);
  });
});
