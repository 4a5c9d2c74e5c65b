import fs from "node:fs";
import path from "node:path";

/*
 * A hostile `claude`, `codex` or `gemini` for the sandbox's black-box tests: it runs its prompt (stdin) as
 * one shell step, as an agent's Bash tool would, inside whatever li started it in, then prints a
 * minimal stream of its CLI whose answer is that step's output (so `li job output` shows what
 * the step saw). Unlike mock/hostile it is the provider li names, so li gives it that provider's
 * state directory, model gateway and environment.
 */

const SCRIPT = (bin: "claude" | "gemini" | "codex") => `#!${process.execPath}
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const step = fs.readFileSync(0, "utf8");
// codex names its thread first, so li follows the thread's log (codex-rollout.ts) while the step runs.
if (${JSON.stringify(bin)} === "codex") fs.writeSync(1, JSON.stringify({ type: "thread.started", thread_id: "hostile-thread-1" }) + "\\n");
let out;
try {
  out = execFileSync("/bin/sh", ["-c", step], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60000 });
} catch (err) {
  out = "step failed: " + String(err.stderr || err.message) + String(err.stdout || "");
}
const say = (o) => fs.writeSync(1, JSON.stringify(o) + "\\n");
const usage = { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
if (${JSON.stringify(bin)} === "claude") {
  say({ type: "system", subtype: "init", cwd: process.cwd(), session_id: "hostile-1", tools: ["Bash"], mcp_servers: [], model: "claude-sonnet-4-5", permissionMode: "bypassPermissions", apiKeySource: "none" });
  say({ type: "assistant", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: out }], stop_reason: "end_turn", usage }, parent_tool_use_id: null, session_id: "hostile-1" });
  say({ type: "result", subtype: "success", is_error: false, duration_ms: 1, duration_api_ms: 1, num_turns: 1, result: out, session_id: "hostile-1", total_cost_usd: 0, usage });
} else if (${JSON.stringify(bin)} === "codex") {
  say({ type: "item.completed", item: { id: "item_0", type: "agent_message", text: out } });
  say({ type: "turn.completed", usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } });
} else {
  say({ type: "init", timestamp: new Date().toISOString(), session_id: "hostile-1", model: "gemini-2.5-pro" });
  say({ type: "message", timestamp: new Date().toISOString(), role: "assistant", content: out });
  say({ type: "result", timestamp: new Date().toISOString(), status: "success", stats: { total_tokens: 2, input_tokens: 1, output_tokens: 1, cached: 0, input: 1, duration_ms: 1, tool_calls: 1 } });
}
`;

/** Writes the hostile `claude`, `codex` and `gemini` into `dir/bin`; returns that folder, to put first on PATH. */
export function installHostileClis(dir: string): string {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  for (const name of ["claude", "codex", "gemini"] as const) fs.writeFileSync(path.join(bin, name), SCRIPT(name), { mode: 0o755 });
  return bin;
}

/**
 * A person's world under `scratch` for a run of a hostile CLI: a work folder (made), the person's
 * home (not made: a suite makes what it puts there), and `base` with that home as HOME and the
 * hostile CLIs first on PATH.
 */
export function hostileWorld(scratch: string, base: NodeJS.ProcessEnv): { home: string; work: string; env: NodeJS.ProcessEnv } {
  const home = path.join(scratch, "person");
  const work = path.join(scratch, "work");
  fs.mkdirSync(work, { recursive: true });
  const bin = installHostileClis(scratch);
  return { home, work, env: { ...base, HOME: home, PATH: `${bin}:${process.env.PATH}` } };
}
