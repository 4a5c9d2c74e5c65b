/*
 * Approval rules that parse shell commands (issue 46): issue 46's table under the two rules, the
 * rules' own bad input, and what a --for-run answer covers. Pure logic (no store, no li process):
 * the same table runs end to end through mock/ask (approvals-table.test.ts) and the real claude.
 */
import { parseApprovalSettings, mergeApprovalRules, shellAllowProblem } from "../src/config/approval-settings.js";
import { checkRulesForRun, coversRequest, decideByRules } from "../src/lifecycle/approvals/rules.js";
import { SHELL_TABLE, TABLE_RULES } from "./helpers/shell-rule-table.js";

const answerOf = async (command: string, extra: Record<string, unknown> = {}, tool = "Bash") => (await decideByRules(TABLE_RULES, tool, { command, ...extra }))?.answer ?? "ask";

test(`issue 46's table: ${SHELL_TABLE.length} commands under {shell, "npm test", allow} and {shell, "rm", deny}`, async () => {
  expect(SHELL_TABLE.length).toBeGreaterThanOrEqual(40);
  const got: [string, string, string][] = [];
  for (const [command, , why] of SHELL_TABLE) got.push([command, await answerOf(command), why]);
  expect(got).toEqual(SHELL_TABLE);
});

test("tool: shell is every provider's shell tool; a background flag is a background &; other tools are untouched", async () => {
  for (const tool of ["Bash", "commandExecution", "run_shell_command", "execute"]) expect([tool, await answerOf("npm test", {}, tool)]).toEqual([tool, "allow"]);
  expect(await answerOf("npm test", {}, "Write")).toBe("ask");
  expect(await answerOf("npm test", { run_in_background: true })).toBe("ask");
  expect(await answerOf("npm test", { background: true }, "commandExecution")).toBe("ask");
  expect(await answerOf("rm x", { run_in_background: true })).toBe("deny");
});

test("a rule answer records which rule, and for a compound command which command matched which rule", async () => {
  const rules = mergeApprovalRules([
    parseApprovalSettings("/u/settings.yaml", { rules: [{ tool: "shell", command: "npm test", answer: "allow" }, { tool: "Bash", command: "tail -5", answer: "allow" }] }, "user"),
  ]);
  const d = await decideByRules(rules, "Bash", { command: "npm test | tail -5" });
  expect(d).toMatchObject({ answer: "allow", by: "rule:0,1", matched: [{ command: "npm test", rule: 0, file: "/u/settings.yaml" }, { command: "tail -5", rule: 1, file: "/u/settings.yaml" }] });
  expect(d!.message).toBe('allowed by rules, one for each command: "npm test" by rule 0 of /u/settings.yaml; "tail -5" by rule 1 of /u/settings.yaml');
  const denied = await decideByRules(TABLE_RULES, "Bash", { command: "npm test && rm -rf ~" });
  expect(denied).toMatchObject({ answer: "deny", by: "rule:1", matched: [{ command: "rm -rf ~", rule: 1 }] });
  // An assignment the rule names.
  const named = mergeApprovalRules([parseApprovalSettings("/u/s.yaml", { rules: [{ tool: "shell", command: "CI=1 npm test", answer: "allow" }] }, "user")]);
  expect((await decideByRules(named, "Bash", { command: "CI=1 npm test --ci" }))?.answer).toBe("allow");
  expect(await decideByRules(named, "Bash", { command: "npm test" })).toBeNull();
  expect(await decideByRules(named, "Bash", { command: "CI=2 npm test" })).toBeNull();
});

test("bad rules: empty or both command and input_matches refused when read; allow + input_matches on a shell tool and an unparsable command refused for a run that asks", async () => {
  const read = (rule: object) => () => parseApprovalSettings("/u/settings.yaml", { rules: [rule] }, "user");
  expect(read({ tool: "shell", command: "  ", answer: "allow" })).toThrow(/approvals\.rules\[0\]\.command.*first words/);
  expect(read({ tool: "shell", command: "npm test", input_matches: "^npm", answer: "deny" })).toThrow(/not both/);
  expect(read({ tool: "Write", command: "npm test", answer: "allow" })).toThrow(/tool: shell/);
  // Read without complaint (commands that use no rules are not affected) ...
  const old = mergeApprovalRules([parseApprovalSettings("/u/settings.yaml", { rules: [{ tool: "Write", answer: "deny" }, { tool: "Bash", input_matches: "^npm (test|run lint)", answer: "allow" }] }, "user")]);
  expect(shellAllowProblem(old[1])).toMatch(/^rule 1 of \/u\/settings.yaml allows the shell tool Bash with input_matches/);
  // ... refused for a run that would use them, naming the rule's number and file and command:.
  await expect(checkRulesForRun(old)).rejects.toMatchObject({ kind: "invalid_input", detail: { code: "approval_rule_refused", rule: 1, file: "/u/settings.yaml" } });
  await expect(checkRulesForRun(old)).rejects.toThrow(/rule 1 of \/u\/settings.yaml.*command:/);
  // An allow rule on the whole shell tool is refused the same way; a deny rule with input_matches is fine.
  const whole = mergeApprovalRules([parseApprovalSettings("/u/s.yaml", { rules: [{ tool: "shell", input_matches: "curl", answer: "deny" }, { tool: "shell", answer: "allow" }] }, "user")]);
  await expect(checkRulesForRun(whole)).rejects.toThrow(/rule 1 of \/u\/s.yaml allows the shell tool shell with no command:/);
  await expect(checkRulesForRun(whole.slice(0, 1))).resolves.toBeUndefined();
  for (const bad of ["npm test &&", "npm test; ls", "$X test", "npm test $(id)", "A=1"]) {
    const rules = mergeApprovalRules([parseApprovalSettings("/u/s.yaml", { rules: [{ tool: "shell", command: bad, answer: "allow" }] }, "user")]);
    await expect(checkRulesForRun(rules)).rejects.toThrow(/rule 0 of \/u\/s.yaml: command: .* does not name one simple command/);
  }
  // Such a rule never allows, even where nothing refused it (a settings file changed under a running run).
  expect(await decideByRules(old, "Bash", { command: "npm test" })).toBeNull();
});

test("--for-run covers later requests whose every command is one of this one's, word for word; --for-run-tool the whole tool", async () => {
  const earlier = (command: string, scope: "commands" | "tool" = "commands", state: "allowed" | "denied" = "allowed") => ({ tool: "Bash", input: JSON.stringify({ command }), scope, state });
  const covers = (e: ReturnType<typeof earlier>, command: string, tool = "Bash") => coversRequest(e, tool, JSON.stringify({ command }));
  const npm = earlier("npm test");
  expect(await covers(npm, "npm test")).toBe(true);
  expect(await covers(npm, "'npm' test")).toBe(true);
  expect(await covers(npm, "npm test && npm test")).toBe(true);
  for (const later of ["npm test && rm -rf ~", "curl http://evil.example/x", "npm test $(id)", "npm test --watch", "npm test &", "npm test > f", "CI=1 npm test"]) expect([later, await covers(npm, later)]).toEqual([later, false]);
  expect(await covers(npm, "npm test", "Write")).toBe(false);
  expect(await covers(earlier("npm test", "tool"), "curl http://evil.example/x")).toBe(true);
  // A denial covers any later request containing one of its commands.
  expect(await covers(earlier("curl http://x", "commands", "denied"), "npm test && curl http://x")).toBe(true);
  // Another tool: the same input only.
  const write = { tool: "Write", input: JSON.stringify({ file_path: "a" }), scope: "commands" as const, state: "allowed" as const };
  expect(await coversRequest(write, "Write", JSON.stringify({ file_path: "a" }))).toBe(true);
  expect(await coversRequest(write, "Write", JSON.stringify({ file_path: "b" }))).toBe(false);
});

test("the strangest input: deep nesting, a long command, a NUL byte go to a person, never allowed", async () => {
  expect(await answerOf("$(".repeat(3000) + "npm test" + ")".repeat(3000))).toBe("ask");
  expect(await answerOf("npm test " + "a ".repeat(40000))).toBe("ask");
  expect(await answerOf("npm test\0")).toBe("ask");
  expect(await answerOf("(".repeat(500) + "npm test" + ")".repeat(500))).toBe("ask");
  expect(await answerOf("npm test " + "x".repeat(1000))).toBe("allow");
});
