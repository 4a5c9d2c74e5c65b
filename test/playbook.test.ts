/**
 * li play end to end: a playbook's declared int/bool/choice args become real options of the
 * command (two-stage parsing), show up in --help, are validated with errors naming the
 * playbook and the arg, and reach the run; list/show report the playbook_fingerprint; and
 * `li kill <play>` reaps play → session → every step, hanging ones included.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { entityRows, events, READY_BYTES, untilAgentReady } from "./helpers/fixtures.js";
import { type Home, li, liData, liveMembers, tempHome, until } from "./helpers/li.js";

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

const REVIEW = `description: review a change
prompt: "Review {input} at depth {depth} (strict={strict}, tone {tone})"
model: mock/echo
max_concurrent: 2
plan:
  steps:
    - {id: read, task: "Read {input}"}
    - {id: judge, task: "Judge it {tone}ly", depends_on: [read]}
args:
  depth: {type: int, default: 2, help: how deep to look}
  strict: {type: bool, help: fail on nits}
  tone: {type: str, choices: [formal, casual], required: true, help: the voice of the review}
`;

const HANGS = `description: two steps that never end, one waiting on them
model: mock/echo
plan:
  steps:
    - {id: h1, task: hang, model: mock/hang}
    - {id: h2, task: hang, model: mock/hang}
    - {id: after, task: "runs after h1", depends_on: [h1]}
`;

/** A git repository with project playbooks, and a fresh LI_HOME with one user playbook. */
function setup(): { h: Home; repo: string; cwd: string } {
  const h = tempHome();
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), "li-play-"));
  cleanups.push(h.cleanup, () => fs.rmSync(repo, { recursive: true, force: true }));
  fs.mkdirSync(path.join(repo, ".git"));
  const dir = path.join(repo, ".li", "playbooks");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "review.playbook.yaml"), REVIEW);
  fs.writeFileSync(path.join(dir, "hangs.playbook.yaml"), HANGS);
  fs.writeFileSync(path.join(dir, "clash.playbook.yaml"), "model: mock/echo\nargs:\n  model: {help: shadows the built-in}\n");
  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(path.join(h.home, "playbooks", "mine.playbook.yaml"), "description: from LI_HOME\nmodel: mock/echo\n");
  const cwd = path.join(repo, "src");
  fs.mkdirSync(cwd);
  return { h, repo, cwd };
}

/** The entities, their spec parsed. */
const rows = async (h: Home): Promise<any[]> => (await entityRows(h)).map((r) => ({ ...r, spec: JSON.parse(r.spec) }));

const sha256 = (file: string) => "sha256:" + createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("li play", () => {
  test("declared int/bool/choice args are parsed, recorded and rendered into the run", async () => {
    const { h, repo, cwd } = setup();
    const r = await li(["--machine", "play", "review", "--tone", "casual", "--depth", "3", "--strict", "the", "diff"], { env: h.env, cwd });
    expect(r.code).toBe(0);
    const data = r.json.data;
    const file = path.join(repo, ".li", "playbooks", "review.playbook.yaml");
    expect(data).toMatchObject({
      kind: "play",
      status: "completed",
      reason_code: "play.completed.session_completed",
      playbook: "review",
      playbook_path: file,
      playbook_fingerprint: sha256(file),
      args: { depth: 3, strict: true, tone: "casual" },
      session: { status: "completed", reason_code: "session.completed.steps_completed", current_phase: "done" },
    });
    expect(data.steps.map((s: any) => [s.id, s.status])).toEqual([
      ["read", "completed"],
      ["judge", "completed"],
    ]);

    // The tree: play → session → steps, and the play's spec carries its playbook identity.
    const all = (await rows(h));
    const play = all.find((x) => x.id === data.id);
    const session = all.find((x) => x.parent_id === play.id);
    expect(session).toMatchObject({ kind: "session", id: data.session.id });
    expect(all.filter((x) => x.parent_id === session.id).map((x) => x.label)).toEqual(["read", "judge"]);
    expect(play.spec).toMatchObject({ playbook: "review", playbook_fingerprint: sha256(file), args: { depth: 3, strict: true, tone: "casual" } });
    // Both supervisors are the one play process.
    expect([session.pid, session.pgid, session.proc_start]).toEqual([play.pid, play.pgid, play.proc_start]);

    // The prompt template and the plan's tasks were filled from the args and the input.
    const judged = fs.readFileSync(path.join(session.run_dir, "outputs", "judge.txt"), "utf8");
    expect(judged.startsWith("Judge it casually\n")).toBe(true);
    expect(judged).toContain("Review the diff at depth 3 (strict=true, tone casual)");
    expect(judged).toContain("--- output of step read ---\nRead the diff");
    // The play's console keeps the session's transcript.
    expect((await liData(["job", "output", play.id], { env: h.env })).output).toContain("=== judge ===");
  });

  test("--help shows the injected args; the MCP argv shape (run, --x=v, -- name) works", async () => {
    const { h, cwd } = setup();
    const help = await li(["play", "review", "--help"], { env: h.env, cwd });
    expect(help.code).toBe(0);
    // Help wraps to the terminal width; compare with whitespace collapsed.
    const text = help.stdout.replace(/\s+/g, " ");
    expect(text).toContain("--depth <n> how deep to look [playbook review arg, int] (default: 2)");
    expect(text).toContain("--strict fail on nits [playbook review arg, bool]");
    expect(text).toContain('--tone <value> the voice of the review [playbook review arg, str, required] (choices: "formal", "casual")');
    // Without a name there is nothing to inject; the base help says how to see them.
    const base = await li(["play", "--help"], { env: h.env, cwd });
    expect(base.stdout).not.toContain("--tone");
    expect(base.stdout).toContain("li play NAME --help");

    const dry = await liData(["play", "run", "--tone=formal", "--depth=7", "--dry-run", "--", "review", "-dash input"], { env: h.env, cwd });
    expect(dry).toMatchObject({ dry_run: true, playbook: "review", args: { depth: 7, strict: false, tone: "formal" }, prompt: "Review -dash input at depth 7 (strict=false, tone formal)" });
    expect(dry.steps.map((s: any) => s.task)).toEqual(["Read -dash input", "Judge it formally"]);
    expect((await rows(h))).toEqual([]);
  });

  test.each([
    ["a bad choice", ["review", "--tone", "rude", "x"], /^playbook review: option '--tone <value>' argument 'rude' is invalid\. Allowed choices are formal, casual\.$/],
    ["a bad int", ["review", "--tone", "formal", "--depth", "1.5", "x"], /^playbook review: option '--depth <n>' argument '1\.5' is invalid\. expected an integer/],
    ["a missing required arg", ["review", "x"], /^playbook review: required option '--tone <value>' not specified$/],
    ["an arg that collides with a built-in flag", ["clash", "x"], /^playbook clash: arg model \(--model\) collides with the built-in flag --model <model>$/],
    ["a missing playbook", ["nope", "x"], /^no playbook named nope: looked for nope\.playbook\.yaml in .*\/src\/\.li\/playbooks, .*\/\.li\/playbooks, .*\/playbooks$/],
    ["a name with a path separator", ["../review", "x"], /is not a playbook name/],
    ["an empty input where the prompt needs {input}", ["review", "--tone", "formal"], /^playbook review: its prompt uses \{input\}/],
    ["an unknown provider in an override", ["review", "--tone", "formal", "--workers", "nope/x", "x"], /^playbook review: unknown provider "nope"/],
    ["an unknown --notify handler", ["review", "--notify", "nosuch", "--tone", "formal", "x"], /--notify nosuch/],
  ])("%s is refused before any record exists, naming the playbook and the arg", async (_what, args, pattern) => {
    const { h, cwd } = setup();
    const r = await li(["--machine", "play", ...args], { env: h.env, cwd });
    expect(r.code).toBe(2);
    expect(r.json.error.kind).toBe("invalid_input");
    expect(r.json.error.message).toMatch(pattern);
    expect((await rows(h))).toEqual([]);
    expect(fs.existsSync(path.join(h.home, "runs"))).toBe(false);
  });

  test("list and show: search order, user playbooks, the resolved schema and the fingerprint", async () => {
    const { h, repo, cwd } = setup();
    const list = await liData(["play", "list"], { env: h.env, cwd });
    expect(list.playbooks.map((p: any) => [p.name, p.scope, p.error === null])).toEqual([
      ["clash", "project", true],
      ["hangs", "project", true],
      ["review", "project", true],
      ["mine", "user", true],
    ]);
    expect(list.searched).toEqual([path.join(fs.realpathSync(cwd), ".li", "playbooks"), path.join(fs.realpathSync(repo), ".li", "playbooks"), path.join(h.home, "playbooks")]);

    const show = await liData(["play", "show", "review"], { env: h.env, cwd });
    const file = path.join(repo, ".li", "playbooks", "review.playbook.yaml");
    expect(show.playbook_fingerprint).toBe(sha256(file));
    expect(show.args.map((a: any) => [a.name, a.flag, a.type, a.required, a.default, a.choices])).toEqual([
      ["depth", "--depth <n>", "int", false, 2, null],
      ["strict", "--strict", "bool", false, null, null],
      ["tone", "--tone <value>", "str", true, null, ["formal", "casual"]],
    ]);
    // Editing the file changes the fingerprint.
    fs.appendFileSync(file, "# edited\n");
    expect((await liData(["play", "show", "review"], { env: h.env, cwd })).playbook_fingerprint).toBe(sha256(file));
    expect(sha256(file)).not.toBe(show.playbook_fingerprint);

    const mine = await liData(["play", "mine", "--detach", "hello"], { env: h.env, cwd });
    expect(mine).toMatchObject({ kind: "play", playbook: "mine", playbook_path: path.join(h.home, "playbooks", "mine.playbook.yaml") });
    await until(async () => (await rows(h)).find((r) => r.id === mine.id)?.status === "completed");
  });

  test("li kill <play> while hanging steps run: every group gone, every entity cancelled, audited", async () => {
    const { h, cwd } = setup();
    // The input is the goal in every step's prompt: READY_BYTES of it make the agents' readiness visible.
    const input = path.join(h.home, "input.txt");
    fs.writeFileSync(input, Buffer.alloc(READY_BYTES, "g"));
    const sub = await liData(["play", "hangs", "--detach", "--prompt-file", input], { env: h.env, cwd });
    // Wait for both hanging steps to be running in their own groups (the third stays queued),
    // each with its agent past the point where it ignores SIGTERM.
    await until(async () => (await rows(h)).filter((r) => r.kind === "invocation" && r.status === "running").length === 2, 20000, 50);
    for (const r of (await rows(h)).filter((r) => r.kind === "invocation" && r.status === "running")) await untilAgentReady(r);

    const tree = (await rows(h));
    const session = tree.find((r) => r.parent_id === sub.id);
    const stepRows = tree.filter((r) => r.parent_id === session.id);
    expect(stepRows.map((r) => [r.label, r.status])).toEqual([
      ["h1", "running"],
      ["h2", "running"],
      ["after", "queued"],
    ]);
    const pgids = [...new Set(tree.filter((r) => r.pgid !== null).map((r) => r.pgid as number))];
    expect(pgids).toHaveLength(3); // the play+session supervisor, h1, h2
    for (const g of pgids) expect(liveMembers(g).length).toBeGreaterThan(0);

    const kill = await li(["--machine", "kill", sub.id, "--grace", "0.3"], { env: h.env });
    expect(kill.code).toBe(0);
    expect(kill.json.data.partial).toBe(false);
    expect(kill.json.data.entities.map((e: any) => [e.kind, e.action])).toEqual([
      ["play", "cancelled"],
      ["session", "cancelled"],
      ["invocation", "cancelled"],
      ["invocation", "cancelled"],
      ["invocation", "cancelled"],
    ]);
    // mock/hang ignores SIGTERM: only the SIGKILL after the grace period stops it.
    expect(kill.json.data.entities.filter((e: any) => e.signals.includes("SIGKILL")).length).toBeGreaterThanOrEqual(2);

    for (const g of pgids) expect(liveMembers(g)).toEqual([]);
    const after = (await rows(h));
    expect(after).toHaveLength(5);
    for (const r of after) {
      expect([r.id, r.status, r.reason_code]).toEqual([r.id, "cancelled", `${r.kind}.cancelled.killed`]);
      const last = (await events(h, r.id)).at(-1);
      expect(last).toMatchObject({ to_status: "cancelled", reason_code: `${r.kind}.cancelled.killed`, source: "admin" });
    }
    // The queued step never started; the supervisor wrote nothing after the kill.
    expect(after.find((r) => r.label === "after").pid).toBeNull();
    await new Promise((r) => setTimeout(r, 400));
    for (const r of (await rows(h))) expect((await events(h, r.id)).filter((e) => e.to_status === "cancelled")).toHaveLength(1);
  });
});
