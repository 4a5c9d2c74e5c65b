/**
 * Profiles (issue 12, items 2 and 4): named presets from user settings or trusted project files,
 * applied by the worker as each provider's own flags; used by li agent, flows, fan-outs,
 * playbooks and schedules; limits a run may lower but never raise; settings a provider cannot
 * honour refused by name. The stand-in CLIs log the argv and LI_TEST_* environment they got.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { useHomes } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { installStandins, type StandinCall } from "./helpers/standins.js";

const home = useHomes({ stopRuns: true });

const PROFILES = (dir: string) => `profiles:
  rev:
    model: claude/sonnet
    description: careful reviewer
    append_system_prompt: "Review only; never push."
    permission_mode: acceptEdits
    allowed_tools: [Read, "Bash(git diff:*)"]
    disallowed_tools: [WebFetch]
    effort: high
    max_turns: 20
    max_budget_usd: 2
    mcp_config: mcp.json
    env: {LI_TEST_PROFILE: rev, LI_TEST_SECRET: s3cret}
    timeout_seconds: 600
  cx:
    model: codex/gpt-5
    permission_mode: workspace-write
    effort: high
    append_system_prompt: "Keep diffs small."
  gem:
    model: gemini/gemini-2.5-pro
    permission_mode: auto_edit
    allowed_tools: [read_file, glob]
`;

function setup() {
  const h = home();
  const s = installStandins(h.home);
  fs.writeFileSync(path.join(h.home, "settings.yaml"), PROFILES(h.home));
  fs.writeFileSync(path.join(h.home, "mcp.json"), JSON.stringify({ mcpServers: {} }));
  const env = { ...h.env, ...s.env };
  const last = (): StandinCall => s.calls().at(-1)!;
  return { h, env, calls: s.calls, last };
}

/** `flag` followed by exactly `values` in argv. */
const after = (argv: string[], flag: string, n = 1) => argv.slice(argv.indexOf(flag) + 1, argv.indexOf(flag) + 1 + n);

describe("li agent --profile", () => {
  test("claude: the profile's model, prompt, permissions, tools, effort, limits, MCP config and env reach the CLI; the record names the profile only", async () => {
    const { h, env, last } = setup();
    const run = await liData(["agent", "--profile", "rev", "success", "review", "this"], { env });
    expect(run).toMatchObject({ status: "completed" });
    const call = last();
    expect(call.prompt).toBe("success review this");
    expect(after(call.argv, "--model")).toEqual(["sonnet"]);
    expect(after(call.argv, "--permission-mode")).toEqual(["acceptEdits"]);
    expect(after(call.argv, "--allowedTools", 2)).toEqual(["Read", "Bash(git diff:*)"]);
    expect(after(call.argv, "--disallowedTools")).toEqual(["WebFetch"]);
    expect(after(call.argv, "--append-system-prompt")).toEqual(["Review only; never push."]);
    expect(after(call.argv, "--mcp-config", 2)).toEqual([path.join(h.home, "mcp.json"), "--strict-mcp-config"]);
    expect(after(call.argv, "--effort")).toEqual(["high"]);
    expect(after(call.argv, "--max-turns")).toEqual(["20"]);
    expect(after(call.argv, "--max-budget-usd")).toEqual(["2"]);
    expect(call.env).toMatchObject({ LI_TEST_PROFILE: "rev", LI_TEST_SECRET: "s3cret" });
    const spec = (await liData(["state", "show", run.id], { env })).record.spec;
    expect(spec).toMatchObject({ model: "claude/sonnet", profile: "rev", timeout_seconds: 600, max_turns: 20, max_budget_usd: 2 });
    // The record and li profile show name env variables, never their values.
    expect(JSON.stringify(spec)).not.toContain("s3cret");
    const shown = await liData(["profile", "show", "rev"], { env });
    expect(shown.profile).toMatchObject({ name: "rev", provider: "claude", env_keys: ["LI_TEST_PROFILE", "LI_TEST_SECRET"], mcp_config: path.join(h.home, "mcp.json"), active: true });
    expect(JSON.stringify(shown)).not.toContain("s3cret");
    expect((await liData(["profile", "list"], { env })).profiles.map((p: any) => p.name)).toEqual(["rev", "cx", "gem"]);
  });

  test("codex and gemini get their own flags for the same settings", async () => {
    const { env, last } = setup();
    await liData(["agent", "--profile", "cx", "success"], { env });
    expect(last().argv).toEqual([
      "exec", "--json", "--skip-git-repo-check", "--model", "gpt-5", "--sandbox", "workspace-write", "-c", 'model_reasoning_effort="high"', "-c", 'developer_instructions="Keep diffs small."', "-",
    ]);
    await liData(["agent", "--profile", "gem", "success"], { env });
    expect(last().argv).toEqual(["--model", "gemini-2.5-pro", "--output-format", "stream-json", "--skip-trust", "--approval-mode", "auto_edit", "--allowed-tools", "read_file,glob"]);
  });

  test("a model beside a profile must be of its provider; a first word that is not provider/model begins the prompt", async () => {
    const { env, last } = setup();
    await liData(["agent", "--profile", "rev", "claude/opus", "success"], { env });
    expect(after(last().argv, "--model")).toEqual(["opus"]);
    await liData(["agent", "--profile", "rev", "success", "src/x.ts", "is", "broken"], { env });
    expect(last().prompt).toBe("success src/x.ts is broken");
    const r = await li(["--machine", "agent", "--profile", "rev", "codex/gpt-5", "success"], { env });
    expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "model", profile: "rev" } });
    expect(r.json.error.message).toMatch(/profile rev runs claude models/);
    const none = await li(["--machine", "agent", "--profile", "nope", "x"], { env });
    expect(none.json.error).toMatchObject({ kind: "invalid_input", detail: { field: "profile", known: ["rev", "cx", "gem"] } });
  });

  test("--max-turns, --max-budget-usd and --timeout may lower a profile's limits, never raise them; a provider without the limit refuses it by name", async () => {
    const { env, last } = setup();
    await liData(["agent", "--profile", "rev", "--max-turns", "5", "--max-budget-usd", "0.5", "success"], { env });
    expect(after(last().argv, "--max-turns")).toEqual(["5"]);
    expect(after(last().argv, "--max-budget-usd")).toEqual(["0.5"]);
    await liData(["agent", "--max-turns", "3", "claude/sonnet", "success"], { env });
    expect(after(last().argv, "--max-turns")).toEqual(["3"]);
    const refusals: [string[], RegExp, string][] = [
      [["--profile", "rev", "--max-turns", "50", "success"], /--max-turns 50 is above profile rev's max_turns 20/, "max_turns"],
      [["--profile", "rev", "--max-budget-usd", "3", "success"], /above profile rev's max_budget_usd 2/, "max_budget_usd"],
      [["--profile", "rev", "--timeout", "601", "success"], /--timeout 601 is above profile rev's timeout_seconds 600/, "timeout"],
      [["--max-turns", "3", "codex/gpt-5", "success"], /codex does not support --max-turns/, "max_turns"],
      [["--max-budget-usd", "1", "gemini/gemini-2.5-pro", "success"], /gemini does not support --max-budget-usd/, "max_budget_usd"],
      [["--max-turns", "3", "mock/echo", "x"], /mock does not support --max-turns/, "max_turns"],
    ];
    for (const [args, message, field] of refusals) {
      const r = await li(["--machine", "agent", ...args], { env });
      expect([r.code, r.json.error.kind, r.json.error.detail.field]).toEqual([2, "invalid_input", field]);
      expect(r.json.error.message).toMatch(message);
    }
    // Nothing was recorded for a refused run.
    expect((await liData(["job", "list"], { env })).count).toBe(2);
  });

  test("a setting the profile's provider cannot honour is refused by name when settings load", async () => {
    const { h, env } = setup();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `profiles:\n  bad: {model: codex/gpt-5, allowed_tools: [Read]}\n`);
    const r = await li(["--machine", "profile", "list"], { env });
    expect(r.json.error.kind).toBe("invalid_input");
    expect(r.json.error.message).toContain(`${path.join(h.home, "settings.yaml")}: profiles.bad: profile bad: codex does not support allowed_tools`);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `profiles:\n  bad: {model: claude/sonnet, permission_mode: yolo}\n`);
    expect((await li(["--machine", "profile", "list"], { env })).json.error.message).toMatch(/claude permission_mode must be one of default, acceptEdits, plan/);
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `profiles:\n  bad: {model: claude/sonnet, permissions: all}\n`);
    expect((await li(["--machine", "profile", "list"], { env })).json.error.message).toMatch(/profiles\.bad\.permissions: unknown key/);
  });
});

describe("project profiles apply only after li hooks trust", () => {
  function project(h: { home: string }) {
    const dir = fs.mkdtempSync(path.join(h.home, "proj-"));
    execFileSync("git", ["init", "-q", dir]);
    fs.mkdirSync(path.join(dir, ".li", "profiles"), { recursive: true });
    fs.writeFileSync(path.join(dir, ".li", "profiles", "builder.yaml"), "model: claude/sonnet\npermission_mode: bypassPermissions\nmcp_config: ../servers.json\n");
    fs.writeFileSync(path.join(dir, ".li", "servers.json"), JSON.stringify({ mcpServers: { fs: { command: "mcp-fs" } } }));
    return dir;
  }

  test("untrusted: ignored and refused with the remedy; trusted: applied; an edit to it or to its MCP config withdraws it", async () => {
    const { h, env, last } = setup();
    const dir = project(h);
    const file = path.join(dir, ".li", "profiles", "builder.yaml");
    const run = (args: string[]) => li(["--machine", ...args], { env, cwd: dir });

    const refused = await run(["agent", "--profile", "builder", "success"]);
    expect(refused.json.error.message).toMatch(/profile builder is not defined.*declared in .*builder\.yaml, which is not trusted, so li ignores it.*li hooks trust/);
    expect(refused.stderr).toMatch(/ignoring .*builder\.yaml \(its profile builder and its mcp_config .*servers\.json\).*not trusted/);
    const listed = (await run(["profile", "list"])).json.data;
    expect(listed.ignored).toEqual([expect.objectContaining({ name: "builder", trust: "untrusted", model: "claude/sonnet" })]);

    const trusted = (await run(["hooks", "trust"])).json.data;
    expect(trusted.path).toBeNull();
    expect(trusted.profiles).toEqual([expect.objectContaining({ name: "builder", permission_mode: "bypassPermissions", mcp_config: path.join(dir, ".li", "servers.json") })]);
    expect((await run(["agent", "--profile", "builder", "success"])).json.data.status).toBe("completed");
    expect(after(last().argv, "--permission-mode")).toEqual(["bypassPermissions"]);
    expect(after(last().argv, "--mcp-config")).toEqual([path.join(dir, ".li", "servers.json")]);

    // A server list edited after review widens what the profile grants: it needs trust again.
    fs.appendFileSync(path.join(dir, ".li", "servers.json"), "\n");
    const changed = await run(["agent", "--profile", "builder", "success"]);
    expect(changed.json.error.message).toMatch(/changed since it was trusted/);
    await run(["hooks", "trust", file]);
    expect((await run(["agent", "--profile", "builder", "success"])).json.ok).toBe(true);
    fs.appendFileSync(file, "effort: high\n");
    expect((await run(["agent", "--profile", "builder", "success"])).json.error.message).toMatch(/changed since it was trusted/);
    const untrusted = (await run(["hooks", "untrust", file])).json.data;
    expect(untrusted.profiles).toEqual([{ path: fs.realpathSync(file), was_trusted: true }]);
  });

  test("a project settings file may not define profiles; one named twice is an error naming both files", async () => {
    const { h, env } = setup();
    const dir = project(h);
    fs.writeFileSync(path.join(dir, ".li", "settings.yaml"), "profiles: {x: {model: mock/echo}}\n");
    const r = await li(["--machine", "hooks", "trust", path.join(dir, ".li", "settings.yaml")], { env, cwd: dir });
    expect(r.json.error.message).toMatch(/a project defines each profile in its own file, \.li\/profiles\/NAME\.yaml/);
    fs.rmSync(path.join(dir, ".li", "settings.yaml"));
    fs.writeFileSync(path.join(dir, ".li", "profiles", "rev.yaml"), "model: claude/haiku\n");
    await li(["--machine", "hooks", "trust"], { env, cwd: dir });
    const dup = await li(["--machine", "profile", "list"], { env, cwd: dir });
    expect(dup.json.error.message).toMatch(/profile rev is also defined in .*settings\.yaml; profile names must be unique/);
  });
});

describe("flows, fan-outs, playbooks and schedules take profiles", () => {
  test("a fan-out under --profile, and per worker with profile:NAME entries", async () => {
    const { env, calls } = setup();
    const all = await liData(["o", "fanout", "-n", "2", "--profile", "rev", "success"], { env });
    expect(all.status).toBe("completed");
    const two = calls().slice(-2);
    expect(two.map((c) => [c.bin, after(c.argv, "--permission-mode")[0]])).toEqual([["claude", "acceptEdits"], ["claude", "acceptEdits"]]);
    const mixed = await liData(["o", "fanout", "--workers", "profile:rev,profile:cx", "success"], { env });
    expect(mixed.status).toBe("completed");
    expect(calls().slice(-2).map((c) => c.bin).sort()).toEqual(["claude", "codex"]);
    expect(mixed.steps.map((s: any) => s.model)).toEqual(["claude/sonnet", "codex/gpt-5"]);
    const kids = (await liData(["job", "list", "--kind", "invocation", "--limit", "2"], { env })).jobs;
    expect(kids.map((k: any) => k.profile).sort()).toEqual(["cx", "rev"]);
  });

  test("a plan step names its own profile; a playbook sets one for its runs", async () => {
    const { h, env, calls } = setup();
    const plan = path.join(h.home, "plan.yaml");
    fs.writeFileSync(plan, "steps:\n  - {id: a, task: success, profile: cx}\n  - {id: b, task: hello, model: mock/echo, depends_on: [a]}\n");
    const flow = await liData(["o", "flow", "--plan-file", plan, "goal"], { env });
    expect(flow.status).toBe("completed");
    expect(calls().at(-1)!.argv).toContain("workspace-write");
    // The mock step got step a's final answer, not codex's console.
    expect(fs.readFileSync(path.join(flow.run_dir, "outputs", "b.txt"), "utf8")).toContain("Yes: there is a README.md in the repository root.");

    fs.mkdirSync(path.join(h.home, "playbooks"));
    fs.writeFileSync(path.join(h.home, "playbooks", "review.playbook.yaml"), "description: review\nprompt: \"success {input}\"\nprofile: rev\nplan: {steps: [{id: r, task: \"success {input}\"}]}\n");
    const play = await liData(["play", "review", "the diff"], { env });
    expect(play.status).toBe("completed");
    expect(after(calls().at(-1)!.argv, "--permission-mode")).toEqual(["acceptEdits"]);
    // Refused before anything runs: a playbook model of another provider than its profile's.
    const bad = await li(["--machine", "play", "review", "--workers", "codex/gpt-5", "x"], { env });
    expect(bad.json.error.message).toMatch(/playbook review: step r: profile rev runs claude models/);
  });

  test("a schedule stores the profile by name and resolves it at each fire", async () => {
    const { h, env, last } = setup();
    const created = await liData(["schedule", "create", "nightly", "--cron", "0 2 * * *", "--profile", "rev", "claude/sonnet", "success"], { env });
    expect(created.schedule.name).toBe("nightly");
    const fired = await liData(["schedule", "trigger", "nightly"], { env });
    const id = fired.id;
    await liData(["wait", id], { env });
    expect(after(last().argv, "--permission-mode")).toEqual(["acceptEdits"]);
    // An edited profile applies at the next fire.
    fs.writeFileSync(path.join(h.home, "settings.yaml"), PROFILES(h.home).replace("permission_mode: acceptEdits", "permission_mode: plan"));
    const again = await liData(["schedule", "trigger", "nightly"], { env });
    await liData(["wait", again.id], { env });
    expect(after(last().argv, "--permission-mode")).toEqual(["plan"]);
  });
});

test("openai: a profile's system prompt is sent as the system message, its effort as reasoning_effort", async () => {
  const { h, env } = setup();
  const bodies: any[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      bodies.push(JSON.parse(body));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { content: "ok" } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints: {local: {base_url: "${base}"}}\nprofiles:\n  terse: {model: openai/gpt-test, system_prompt: "Answer in one word.", effort: low}\n`);
    const run = await liData(["agent", "--endpoint", "local", "--profile", "terse", "what colour is the sky"], { env });
    expect(run.status).toBe("completed");
    expect(bodies[0]).toMatchObject({ model: "gpt-test", reasoning_effort: "low", messages: [{ role: "system", content: "Answer in one word." }, { role: "user", content: "what colour is the sky" }] });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
