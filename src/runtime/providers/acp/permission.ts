import type { AskAnswer, AskRequest } from "../../approvals/protocol.js";

/*
 * An ACP permission request as an li approval request, and li's answer as the option the agent
 * is sent. Pure, so the mapping the rules (issue 46) depend on is tested without an agent.
 *
 * The tool name: a shell command (a tool call of kind `execute`) is recorded under the route's
 * shell name (`run_shell_command` for gemini, `execute` for any other ACP agent) with the command
 * in `input.command` when the agent sends it raw (else only its title, which no rule reads); any other tool call under its kind (edit, delete, fetch, …) or `other`.
 * The agent's own rawInput is kept beside it when it sends one.
 */

export interface PermissionOptionLike {
  optionId: string;
  kind: string;
  name?: string;
}

export interface ToolCallLike {
  toolCallId?: string;
  kind?: string | null;
  title?: string | null;
  rawInput?: unknown;
  content?: unknown;
  locations?: unknown;
}

const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/**
 * The command a shell tool call will run: the agent's rawInput.command (a string or argv). Never
 * its title: a title is the agent's prose about the call (gemini sends no raw input), and a rule
 * that allowed by it would allow what the title says, not what runs. Without one, no command rule
 * answers the request and it goes to a person.
 */
export function shellCommand(tool: ToolCallLike): string | null {
  const raw = obj(tool.rawInput);
  const c = raw?.command ?? raw?.cmd;
  if (typeof c === "string" && c) return c;
  // An argv only when every word reads the same bare in a shell as exec'd: whether the agent execs
  // it or joins it for a shell is its own business, and a word either would read otherwise is not li's to guess.
  if (Array.isArray(c) && c.length && c.every((x) => typeof x === "string" && /^[A-Za-z0-9_+.,:\/@%=-]+$/.test(x))) return (c as string[]).join(" ");
  return null;
}

/** The li request for `tool`; `shellTool` names a shell command on this route. */
export function askRequestOf(tool: ToolCallLike, shellTool: string): AskRequest {
  const raw = obj(tool.rawInput);
  const kind = typeof tool.kind === "string" && tool.kind ? tool.kind : "other";
  const input: Record<string, unknown> = { ...(raw ?? {}) };
  if (kind === "execute") {
    const command = shellCommand(tool);
    if (command !== null) input.command = command;
    const bg = raw?.is_background ?? raw?.background ?? raw?.run_in_background;
    if (bg === true) input.background = true;
  }
  if (typeof tool.title === "string" && tool.title) input.title ??= tool.title;
  if (Array.isArray(tool.locations) && tool.locations.length) input.locations ??= tool.locations;
  return { tool_name: kind === "execute" ? shellTool : kind, input, tool_use_id: typeof tool.toolCallId === "string" ? tool.toolCallId : "" };
}

export type Outcome = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

/**
 * The option answering `answer`: allow_once for an allow, reject_once for a deny; never an
 * "always" option (li keeps "don't ask again" itself). With no such option the turn is
 * cancelled: the safe side, and never an allow the agent did not offer once.
 */
export function outcomeOf(answer: AskAnswer, options: readonly PermissionOptionLike[]): Outcome {
  const want = answer.behavior === "allow" ? "allow_once" : "reject_once";
  const o = options.find((x) => x.kind === want);
  return o ? { outcome: "selected", optionId: o.optionId } : { outcome: "cancelled" };
}
