/*
 * Approval rules when the shell parser cannot be loaded (a broken install: web-tree-sitter or
 * tree-sitter-bash missing): a request a shell rule must judge is never allowed; the worker's
 * channel denies it saying why. Rules for other tools still answer, and a run that asks is
 * refused before any record when its command: rules cannot be checked.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { jest } from "@jest/globals";
import { askApproval } from "../src/runtime/approvals/ask-client.js";
import { openChannel } from "../src/runtime/approvals/channel.js";
import { TABLE_RULES } from "./helpers/shell-rule-table.js";

// ES modules: the mock is registered before rules.js (and the parser module) is first imported.
const actual = await import("../src/packages.js");
jest.unstable_mockModule("../src/packages.js", () => ({
  ...actual,
  treeSitter: () => {
    throw new Error("Cannot find module 'web-tree-sitter'");
  },
}));
const { checkRulesForRun, decideByRules } = await import("../src/lifecycle/approvals/rules.js");

test("a missing parser: a shell request under command: rules is denied by the channel saying why, never allowed; other tools' rules still answer", async () => {
  await expect(decideByRules(TABLE_RULES, "Bash", { command: "npm test" })).rejects.toThrow(/web-tree-sitter/);
  await expect(checkRulesForRun(TABLE_RULES)).rejects.toThrow(/web-tree-sitter/);
  const write = [{ tool: "Write", command: null, input_matches: null, answer: "deny" as const, index: 0, file: "s.yaml" }];
  expect(await decideByRules(write, "Write", { file_path: "x" })).toMatchObject({ answer: "deny", by: "rule:0" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-noparser-"));
  const logged: string[] = [];
  const channel = await openChannel(dir, async (req) => {
    const d = await decideByRules(TABLE_RULES, req.tool_name, req.input);
    return d?.answer === "allow" ? { behavior: "allow", updatedInput: req.input } : { behavior: "deny", message: "a person would be asked" };
  }, (t) => logged.push(t));
  try {
    const answer = await askApproval(channel.path, { tool_name: "Bash", input: { command: "npm test" }, tool_use_id: "t1" });
    expect(answer).toEqual({ behavior: "deny", message: expect.stringMatching(/^li could not decide this request: .*web-tree-sitter/) });
    expect(logged.join("\n")).toMatch(/approval request for Bash failed: .*web-tree-sitter/);
  } finally {
    await channel.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
