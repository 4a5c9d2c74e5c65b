/**
 * Issue 46's table through every route's adapter: the function each asking route uses to turn
 * its provider's request into the rules' input (tool name, `input.command`), then decideByRules.
 * codex: requestOf on the command as codex app-server sends it (its argv `/bin/bash -lc SCRIPT`
 * joined by Rust shlex, test/helpers/shlex-join.ts); a declared ACP agent: askRequestOf on a tool
 * call of kind execute with the raw input Qwen Code sends; gemini: askRequestOf on what gemini
 * sends (a title, no raw input), where every row goes to a person; claude and Qwen's background
 * flags. The real CLIs prove these adapters are what their routes use
 * (test/agent-clis-rules-routes.test.ts).
 */
import path from "node:path";
import { requestOf, unwrapShell } from "../src/runtime/providers/codex-app-server/requests.js";
import { askRequestOf } from "../src/runtime/providers/acp/permission.js";
import { decideByRules } from "../src/lifecycle/approvals/rules.js";
import { parseShell } from "../src/lifecycle/approvals/shell-parse.js";
import { SHELL_TABLE, TABLE_RULES, type Expected } from "./helpers/shell-rule-table.js";
import { shlexJoin } from "./helpers/shlex-join.js";
import { oneStore } from "./helpers/stores.js";

const answer = async (tool: string, input: Record<string, unknown>): Promise<Expected> => (await decideByRules(TABLE_RULES, tool, input))?.answer ?? "ask";
/** In the background an allowed row goes to a person; a denied one stays denied. */
const inBackground = (e: Expected): Expected => (e === "allow" ? "ask" : e);

async function throughTable(route: (command: string, i: number) => Promise<Expected>, expect_: (e: Expected) => Expected = (e) => e) {
  const got: [string, Expected, string][] = [];
  for (const [i, [command, , why]] of SHELL_TABLE.entries()) got.push([command, await route(command, i), why]);
  expect(got).toEqual(SHELL_TABLE.map(([c, e, w]) => [c, expect_(e), w]));
}

const codexRequest = (command: string, i: number, shell = "/bin/bash") =>
  requestOf("item/commandExecution/requestApproval", { threadId: "t", turnId: "u", itemId: `call_${i}`, command: shlexJoin([shell, "-lc", command]), cwd: "/w", commandActions: [] })!;

oneStore(`codex: every row of the table, sent as codex app-server sends it (/bin/bash -lc, shlex-quoted), is unwrapped to the row and gets its answer`, async () => {
  expect(SHELL_TABLE.length).toBeGreaterThanOrEqual(40);
  await throughTable(async (command, i) => {
    const req = codexRequest(command, i);
    expect([req.tool_name, req.input.command]).toEqual(["commandExecution", command]);
    return answer(req.tool_name, req.input);
  });
});

oneStore("codex: the unwrapping agrees with the shell parser for every row, under bash, sh and zsh; what is not exactly codex's form stays wrapped and goes to a person", async () => {
  for (const [i, [command]] of SHELL_TABLE.entries()) {
    for (const shell of ["/bin/bash", "/usr/bin/zsh", "sh"]) {
      const raw = shlexJoin([shell, "-lc", command]);
      const parsed = await parseShell(raw);
      // One simple command, the shell with the row as one literal word (the shell itself is what li cannot see through).
      expect([raw, parsed.opaque, parsed.commands.map((c) => c.words)]).toEqual([raw, [`${path.basename(shell)} in command position`], [[shell, "-lc", command]]]);
      expect([raw, unwrapShell(raw)]).toEqual([raw, command]);
      expect(codexRequest(command, i, shell).input.command).toBe(command);
    }
  }
  // A quote codex never writes ('\'' rather than shlex's "'"), a second word, another shell: left as sent.
  for (const odd of [`/bin/bash -lc 'echo '\\''x'\\'''`, "/bin/bash -lc 'npm test' 'x'", "/bin/fish -c 'npm test'", "/bin/bash -lc \"npm test $(id)\"", "/bin/bash -lc npm\\ test"]) {
    expect(unwrapShell(odd)).toBe(odd);
    expect([odd, await answer("commandExecution", { command: odd })]).toEqual([odd, "ask"]);
  }
  // An argv codex runs without a shell (its `shell` tool's ["npm", "test"]) is joined the same way and parses back to it.
  expect(await answer("commandExecution", requestOf("item/commandExecution/requestApproval", { itemId: "c", command: shlexJoin(["npm", "test", "a b"]) })!.input)).toBe("allow");
  expect(await answer("commandExecution", requestOf("item/commandExecution/requestApproval", { itemId: "c", command: shlexJoin(["rm", "-rf", "x y"]) })!.input)).toBe("deny");
  // No command at all (a network approval): no shell rule answers it.
  expect(await answer("commandExecution", requestOf("item/commandExecution/requestApproval", { itemId: "c" })!.input)).toBe("ask");
});

/** A Qwen Code run_shell_command as its ACP tool call carries it. */
const qwenCall = (command: string, i: number, background = false) => ({
  toolCallId: `run_shell_command-${i}`,
  kind: "execute",
  title: `${command} [current working directory /w] (row ${i})`,
  rawInput: { command, description: `row ${i}`, is_background: background },
});

oneStore("a declared ACP agent (Qwen Code's raw input): every row of the table is recorded as execute with the row and gets its answer; in the background, an allowed row goes to a person", async () => {
  await throughTable(async (command, i) => {
    const req = askRequestOf(qwenCall(command, i), "execute");
    expect([req.tool_name, req.input.command]).toEqual(["execute", command]);
    return answer(req.tool_name, req.input);
  });
  await throughTable(async (command, i) => {
    const req = askRequestOf(qwenCall(command, i, true), "execute");
    return answer(req.tool_name, req.input);
  }, inBackground);
});

oneStore("ACP: an argv raw command is used only when every word reads the same bare in a shell; otherwise no command, and a person answers", async () => {
  const argv = (command: string[]) => askRequestOf({ kind: "execute", rawInput: { command } }, "execute").input;
  expect(await answer("execute", argv(["npm", "test", "--ci=true"]))).toBe("allow");
  for (const words of [["npm", "test", "$(id)"], ["npm test"], ["npm", "test", "a b"], ["npm", "test", ";", "curl", "x"], []]) {
    // The agent's raw input is kept as it came (an array), so no command is given to the rules.
    const input = argv(words);
    expect([words, typeof input.command, await answer("execute", input)]).toEqual([words, "object", "ask"]);
  }
});

oneStore("gemini: no row is answered by a rule, however its title spells the command: gemini sends no raw command, so every request goes to a person", async () => {
  await throughTable(async (command, i) => {
    // What gemini 0.61 sends over ACP for run_shell_command: the title and content, no rawInput.
    const req = askRequestOf({ toolCallId: `run_shell_command-${i}`, kind: "execute", title: command, content: [{ type: "content", content: { type: "text", text: command } }], locations: [] }, "run_shell_command");
    expect([req.tool_name, req.input.command]).toEqual(["run_shell_command", undefined]);
    return answer(req.tool_name, req.input);
  }, () => "ask");
});

oneStore("claude: every row with run_in_background goes to a person unless a rule denies it", async () => {
  await throughTable((command) => answer("Bash", { command, description: "row", run_in_background: true }), inBackground);
  await throughTable((command) => answer("Bash", { command, description: "row", run_in_background: false }));
});
