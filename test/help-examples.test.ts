import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { Command } from "../src/cli/commander.js";
import type { CliContext } from "../src/cli/adapter.js";
import { buildProgram } from "../src/cli/program.js";
import { useHomes } from "./helpers/fixtures.js";
import { li, LI_BIN, liData, until } from "./helpers/li.js";
import { startDaemon } from "./helpers/hosts.js";

/*
 * Issue 13, item 8: every example in every command's --help runs as written. Each example is
 * run by bash in one LI_HOME, in a directory holding the files the examples name, with `li`
 * the built CLI. No li call in any example may be a usage error (exit 2); an example that
 * needs no real provider and names no made-up id must succeed outright.
 */

const home = useHomes({ stopRuns: true });

/** Every command of the full program, depth first, with its help text as --help prints it. */
async function helpTexts(): Promise<{ path: string; help: string }[]> {
  const ctx: CliContext = { machine: false, live: process.stderr };
  const program = await buildProgram(ctx, { all: true });
  const out: { path: string; help: string }[] = [];
  const walk = (cmd: Command, words: string[]) => {
    let help = "";
    cmd.configureOutput({ writeOut: (s) => (help += s), writeErr: (s) => (help += s) });
    cmd.outputHelp();
    out.push({ path: words.join(" "), help });
    for (const sub of cmd.commands) walk(sub, [...words, sub.name()]);
  };
  for (const c of program.commands) walk(c, [c.name()]);
  return out;
}

/** The lines of each "Example:" / "Examples:" block. */
function examples(help: string): string[] {
  const out: string[] = [];
  let inBlock = false;
  for (const line of help.split("\n")) {
    if (/^Examples?:\s*$/.test(line)) inBlock = true;
    else if (inBlock && line.trim() === "") inBlock = false;
    else if (inBlock) out.push(line.trim());
  }
  return out;
}

/** Whether the home's store holds a schedule of that name. */
function hasSchedule(home: string, name: string): boolean {
  const db = new Database(path.join(home, "state.db"), { readonly: true, fileMustExist: true });
  try {
    return !!db.prepare("SELECT 1 FROM schedules WHERE name = ?").get(name);
  } finally {
    db.close();
  }
}

const NEEDS_MORE = /claude\/|codex\/|gemini\/|openai\/|inv_01j|ses_01k|ply_01m|apr_01k/;

test("every help example runs as written", async () => {
  const h = home();
  const dir = fs.mkdtempSync(path.join(h.home, "cwd-"));
  // The files and things the examples name.
  fs.writeFileSync(path.join(dir, "task.md"), "the task\n");
  fs.writeFileSync(path.join(dir, "nightly.md"), "the nightly prompt\n");
  fs.writeFileSync(path.join(dir, "report.md"), "all tests pass\n");
  fs.writeFileSync(path.join(dir, "plan.yaml"), "steps:\n  - {id: a, task: first}\n  - {id: b, task: second, depends_on: [a]}\n");
  fs.writeFileSync(path.join(dir, "nightly.yaml"), "name: nightly-copy\ncron: '0 2 * * *'\ntimezone: UTC\naction: [agent, mock/echo, --, nightly]\n");
  fs.writeFileSync(path.join(h.home, "settings.yaml"), 'endpoints: {local: {base_url: "http://127.0.0.1:9/v1"}}\nprofiles:\n  reviewer: {model: mock/echo}\n');
  fs.mkdirSync(path.join(h.home, "playbooks"));
  fs.writeFileSync(path.join(h.home, "playbooks", "review.playbook.yaml"), 'description: review\nprompt: "review {input} for {focus}"\nmodel: mock/echo\nargs:\n  focus: {type: str, default: bugs}\n');
  await liData(["schedule", "create", "nightly", "--cron", "0 2 * * *", "mock/echo", "nightly"], { env: h.env, cwd: dir });
  await liData(["agent", "--detach", "--label", "nightly", "mock/echo", "labelled"], { env: h.env, cwd: dir });

  // The examples place work on gpu-1, so it must have registered once (a host no daemon ever
  // registered is refused as a likely typo): its daemon runs a moment, then stops.
  const gpu1 = startDaemon(h, { env: { LI_HOST: "gpu-1" } });
  await until(async () => (await liData(["host", "list"], { env: h.env })).hosts.some((x: any) => x.host === "gpu-1"));
  expect(await gpu1.stop()).toBe(0);

  const log = path.join(h.home, "calls.log");
  const prelude = `li() { node ${JSON.stringify(LI_BIN)} "$@"; local rc=$?; printf '%s\\t%q\\n' "$rc" "$*" >> ${JSON.stringify(log)}; return $rc; }`;
  const all = (await helpTexts()).flatMap((t) => examples(t.help).map((e) => ({ path: t.path, example: e })));
  expect(all.length).toBeGreaterThan(40);
  const failures: string[] = [];
  for (const { path: cmd, example } of all) {
    // A live view never ends off a terminal; test/follow.test.ts drives it in a pty.
    if (/--watch\b/.test(example)) continue;
    // Nor does a server (test/studio-http and test/studio-browser start li studio) or a daemon (test/host-daemon).
    if (/^(LI_\w+=\S+ )*li (studio|host run)\b/.test(example)) continue;
    // Examples delete and recreate what others name: put the schedule back where one deleted it
    // (looked up in the store, not with a li per example).
    if (!hasSchedule(h.home, "nightly")) await liData(["schedule", "create", "nightly", "--cron", "0 2 * * *", "mock/echo", "nightly"], { env: h.env, cwd: dir });
    // A setup as doctor advises ticks schedules; the test's own schedule may be older than doctor's 2-minute window.
    if (/\bli (--machine )?doctor\b/.test(example)) await liData(["schedule", "tick"], { env: h.env, cwd: dir });
    fs.writeFileSync(log, "");
    try {
      execFileSync("bash", ["-c", `${prelude}\n${example}`], { cwd: dir, env: h.env, stdio: ["ignore", "ignore", "ignore"], timeout: 60_000 });
    } catch (err: any) {
      if (err.signal) failures.push(`[${cmd}] ${example}: did not finish (${err.signal})`);
    }
    const calls = fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => l.split("\t"));
    if (!calls.length) failures.push(`[${cmd}] ${example}: ran no li`);
    for (const [rc, args] of calls) {
      if (rc === "2") failures.push(`[${cmd}] ${example}: li ${args} is a usage error`);
      else if (rc !== "0" && !NEEDS_MORE.test(example)) failures.push(`[${cmd}] ${example}: li ${args} exited ${rc}`);
    }
  }
  expect(failures).toEqual([]);
}, 600_000);

test("li --machine --help is one li.result object with the help text", async () => {
  const h = home();
  for (const args of [["--help"], ["job", "list", "--help"], ["help", "kill"]]) {
    const r = await li(["--machine", ...args], { env: h.env });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ contract: "li.result", ok: true, data: { help: expect.stringContaining("Usage: li") } });
  }
  expect((await li(["--machine", "kill", "--help"], { env: h.env })).json.data.command).toBe("li kill");
  expect((await li(["--machine", "--version"], { env: h.env })).json.data).toEqual({ version: expect.any(String) });
});
