import { runOps, type CallContext, type Op } from "./dispatcher.js";
import { MAX_OPS } from "./limits.js";
import { catalog, HelpError, verbHelp } from "./help.js";
import type { Surface } from "./surface.js";
import { tooDeep } from "./values.js";
import { clip, MESSAGE_CHARS, quoted } from "./echo.js";

export interface ToolResult {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The same JSON object as structuredContent and as the text of the single content item. */
export const mirrored = (body: Record<string, unknown>): ToolResult => ({ content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body });

/** A whole-call refusal: no op runs, and the text says what to do (bounded, whatever it quotes). */
export const refuse = (text: string): ToolResult => ({ content: [{ type: "text", text: clip(text, MESSAGE_CHARS) }], isError: true });

const OP_KEYS = new Set(["op", "args", "schema_fingerprint", "playbook_fingerprint"]);

/** Handles one call of the request tool. */
export async function handleRequest(surface: Surface, input: unknown, opts: CallContext = {}): Promise<ToolResult> {
  const params = (input ?? {}) as Record<string, unknown>;
  const stray = Object.keys(params).filter((k) => k !== "ops" && k !== "help");
  if (stray.length) return refuse(`request takes only "ops" and "help"; remove ${quoted(stray)}`);
  const { ops, help } = params;
  const hasOps = ops !== undefined && !(Array.isArray(ops) && ops.length === 0);
  const hasHelp = help !== undefined && help !== false && help !== null;

  if (hasHelp && hasOps) return refuse('send either "help" or a non-empty "ops", not both: read help first, then send ops in a second call');
  if (hasHelp) {
    if (tooDeep(help, 2)) return refuse('help must be true, a verb id string, or {"verb": ..., "playbook": ...} with string values');
    try {
      if (help === true) return mirrored(await catalog(surface, opts.policy));
      if (typeof help === "string" || (typeof help === "object" && !Array.isArray(help))) return mirrored(await verbHelp(surface, help as any, opts.policy));
      return refuse('help must be true, a verb id string, or {"verb": ..., "playbook": ...}');
    } catch (err) {
      if (err instanceof HelpError) return refuse(err.message);
      throw err;
    }
  }
  if (ops === undefined || (Array.isArray(ops) && ops.length === 0))
    return refuse('send "help": true for the verb catalog, or "ops": [{"op": "<verb>", "args": {...}}] to run verbs');
  if (!Array.isArray(ops)) return refuse('"ops" must be an array of {"op", "args", "schema_fingerprint"} objects');
  if (ops.length > MAX_OPS) return refuse(`at most ${MAX_OPS} ops per call (got ${ops.length}); split them across calls`);
  for (const [i, op] of ops.entries()) {
    if (!op || typeof op !== "object" || Array.isArray(op)) return refuse(`ops[${i}] must be an object like {"op": "<verb>", "args": {...}}`);
    const extra = Object.keys(op).filter((k) => !OP_KEYS.has(k));
    if (extra.length)
      return refuse(`ops[${i}] has unknown keys ${quoted(extra)}; an op takes only "op", "args", "schema_fingerprint" and "playbook_fingerprint" (parameters go inside "args")`);
  }
  return mirrored(await runOps(surface, ops as Op[], opts));
}
