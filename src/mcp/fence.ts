/** Privilege-granting paths no MCP verb may run (ADR-0066 D8). */
export const FENCED_PATHS: readonly (readonly string[])[] = [
  ["state", "migrate"],
  ["plugin", "trust"],
  ["hooks", "trust"],
  // A person's declaration that a host is gone: it ends that host's runs on nobody's evidence.
  ["host", "forget"],
  // A person's limits: an agent must never set, raise or remove the budget it runs under.
  ["budget", "set"],
  ["budget", "delete"],
  // A person's answer to an agent's permission request: an agent never approves its own, or anyone's.
  ["approve"],
  ["deny"],
];

/** True when `cliPath` is, or lies under, a fenced path, or is any trust or migrate command. */
export function isFenced(cliPath: readonly string[]): boolean {
  const lower = cliPath.map((s) => s.trim().toLowerCase());
  if (FENCED_PATHS.some((f) => f.every((seg, i) => lower[i] === seg))) return true;
  return lower.some((seg) => seg === "trust" || seg === "migrate");
}

/**
 * Options no projected schema may carry: they grant a run permissions, tools or servers, which
 * only a profile in settings may do (ADR-0066 D8's principle, applied to parameters). li has no
 * such option; if one is ever added to a command a verb projects, that verb is unavailable
 * rather than a way around the profiles.
 */
export const FENCED_OPTIONS: readonly string[] = [
  "--permission-mode",
  "--allowed-tools",
  "--allowedTools",
  "--disallowed-tools",
  "--disallowedTools",
  "--tools",
  "--mcp-config",
  "--strict-mcp-config",
  "--dangerously-skip-permissions",
  // Not li's own --sandbox (workspace|off): it only ever narrows what a run may do, and `li mcp
  // --sandbox workspace` is the floor no op may lower. A provider's --sandbox is a profile's.
  "--approval-mode",
  "--system-prompt",
  "--append-system-prompt",
  "--env",
];

export function isFencedOption(long: string): boolean {
  return FENCED_OPTIONS.includes(long);
}
