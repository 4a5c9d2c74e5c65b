import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "../../entrypoints.js";
import { OPEN_POLICY, policyRefusal, type Policy } from "../../config/policy.js";

/*
 * `li mcp classify`: a permission hook for MCP clients. With one tool, a rule on the tool name
 * cannot tell reading a job's status from spawning twenty agents (ADR-0066 Consequences), so
 * this reads the call's ops and decides per verb: read → allow, spawn or control → ask,
 * unknown, retired or not offered → deny. The most restrictive op decides the call.
 */

type Decision = "allow" | "ask" | "deny";
interface Index {
  verbs: { id: string; category: string; effects: string[] }[];
  declined: { id: string; reason: string }[];
  retired: { name: string; target: string; retiresOn: string }[];
}

const RANK: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

function loadIndex(): Index {
  return JSON.parse(fs.readFileSync(path.join(packageRoot(), "dist", "bundle", "verbs.json"), "utf8"));
}

/** li's tool, known by its input (clients prefix server names differently): only ops and help. */
function liInput(input: unknown): { ops?: unknown; help?: unknown } | null {
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch {
      return null;
    }
  }
  if (!input || typeof input !== "object" || Array.isArray(input)) return null;
  const keys = Object.keys(input);
  if (!keys.length || !keys.every((k) => k === "ops" || k === "help")) return null;
  return input as { ops?: unknown; help?: unknown };
}

/** One op's decision and why. */
function classifyOp(index: Index, policy: Policy, op: unknown, today: string): { decision: Decision; reason: string } {
  const name = op && typeof op === "object" ? (op as { op?: unknown }).op : undefined;
  if (typeof name !== "string") return { decision: "deny", reason: "an op without a verb id" };
  const verb = index.verbs.find((v) => v.id === name);
  if (verb) {
    const rule = policyRefusal(policy, verb);
    if (rule) return { decision: "deny", reason: `${name} is refused by policy (${rule})` };
    if (verb.category === "read") return { decision: "allow", reason: `${name} reads` };
    return { decision: "ask", reason: `${name} ${verb.category === "spawn" ? "spawns" : "changes"} work (${verb.effects.join(", ")})` };
  }
  const declined = index.declined.find((d) => d.id === name);
  if (declined) return { decision: "deny", reason: `${name} is not offered: ${declined.reason}` };
  const retired = index.retired.find((r) => r.name === name);
  if (retired && today >= retired.retiresOn) return { decision: "deny", reason: `${name} was retired on ${retired.retiresOn}; use ${retired.target}` };
  if (retired) return classifyOp(index, policy, { op: retired.target }, today);
  return { decision: "deny", reason: `${name} is no li verb` };
}

/** The whole call's decision: help is a read; otherwise the most restrictive op. */
export function classifyCall(input: { ops?: unknown; help?: unknown }, policy: Policy = OPEN_POLICY, index = loadIndex()): { decision: Decision; reason: string } {
  if (!Array.isArray(input.ops) || input.ops.length === 0) return { decision: "allow", reason: "help reads the catalog" };
  const today = new Date().toISOString().slice(0, 10);
  const each = input.ops.map((op) => classifyOp(index, policy, op, today));
  const worst = each.reduce((a, b) => (RANK[b.decision] > RANK[a.decision] ? b : a));
  return { decision: worst.decision, reason: `li: ${each.filter((e) => e.decision === worst.decision).map((e) => e.reason).join("; ")}` };
}

/** Reads a hook payload; answers in the caller's own format, or nothing for a payload that is not li's. */
export function classifyHook(payload: unknown, policy: Policy): string | null {
  if (!payload || typeof payload !== "object") return null;
  const p = payload as Record<string, unknown>;
  const input = liInput(p.tool_input);
  if (!input) return null;
  const { decision, reason } = classifyCall(input, policy);
  if (p.hook_event_name === "beforeMCPExecution")
    return JSON.stringify({ permission: decision, user_message: reason, agent_message: decision === "allow" ? undefined : `${reason}. ${decision === "deny" ? "Do not retry this op." : "Waiting for the user to approve."}` });
  return JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason } });
}
