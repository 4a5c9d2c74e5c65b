import fs from "node:fs";
import path from "node:path";
import { li, ROOT, tempHome } from "./helpers/li.js";

const h = tempHome();
afterAll(() => h.cleanup());
const recorded = (name: string) => JSON.parse(fs.readFileSync(path.join(ROOT, "test", "fixtures", "hooks", name), "utf8"));
/** A recorded payload with li's tool input replaced. */
function withOps(payload: any, input: unknown) {
  return { ...payload, tool_input: typeof payload.tool_input === "string" ? JSON.stringify(input) : input };
}
async function classify(payload: unknown, flags: string[] = []) {
  const r = await li(["mcp", "classify", ...flags], { env: h.env, input: JSON.stringify(payload) });
  expect(r.code).toBe(0);
  return r.stdout.trim() ? JSON.parse(r.stdout) : null;
}
const decisionOf = (out: any) => out?.hookSpecificOutput?.permissionDecision ?? out?.permission;

describe.each([
  ["Claude Code PreToolUse", "claude-code-pretooluse.json"],
  ["VS Code PreToolUse", "vscode-pretooluse.json"],
  ["Cursor beforeMCPExecution", "cursor-beforemcpexecution.json"],
])("%s", (_client, file) => {
  const payload = recorded(file);

  test("a read batch is allowed, in the caller's own format", async () => {
    const out = await classify(payload);
    expect(decisionOf(out)).toBe("allow");
    if (payload.hook_event_name === "beforeMCPExecution") expect(out).toMatchObject({ permission: "allow", user_message: expect.any(String) });
    else expect(out.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecisionReason: expect.stringMatching(/reads/) });
  });

  test("a batch containing a spawn asks, naming the spawn and its effects", async () => {
    const out = await classify(withOps(payload, { ops: [{ op: "job.list" }, { op: "agent.submit", args: { model: "m", prompt: "p" } }] }));
    expect(decisionOf(out)).toBe("ask");
    expect(JSON.stringify(out)).toMatch(/agent\.submit spawns work \(spawns/);
  });

  test.each([["state.migrate", /not offered: fenced/], ["hooks.trust", /fenced/], ["job.nuke", /no li verb/], ["submit_agent", /retired on 2026-09-30; use agent\.submit/]])("%s is denied with the reason", async (op, why) => {
    const out = await classify(withOps(payload, { ops: [{ op: "job.status" }, { op }] }));
    expect(decisionOf(out)).toBe("deny");
    expect(JSON.stringify(out)).toMatch(why);
  });

  test("the policy in force decides too: --read-only denies a kill", async () => {
    const out = await classify(withOps(payload, { ops: [{ op: "job.kill", args: { id: "x" } }] }), ["--read-only"]);
    expect(decisionOf(out)).toBe("deny");
    expect(JSON.stringify(out)).toMatch(/policy \(read_only/);
  });

  test("a payload that is not li's passes through: no output, exit 0", async () => {
    expect(await classify({ ...payload, tool_name: "Bash", tool_input: payload.tool_input && typeof payload.tool_input === "string" ? '{"command":"ls"}' : { command: "ls" } })).toBeNull();
  });
});

test("li's tool is known by its input, not its name: help alone is a read", async () => {
  expect(decisionOf(await classify({ hook_event_name: "PreToolUse", tool_name: "mcp__my-li-server__request", tool_input: { help: true } }))).toBe("allow");
  expect(await classify({ hook_event_name: "PreToolUse", tool_name: "mcp__li__request", tool_input: { ops: [], other: 1 } })).toBeNull();
  expect((await li(["mcp", "classify"], { env: h.env, input: "not json" })).stdout).toBe("");
});
