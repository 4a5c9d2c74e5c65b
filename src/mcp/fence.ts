/** Privilege-granting paths no MCP verb may run (ADR-0066 D8). */
export const FENCED_PATHS: readonly (readonly string[])[] = [
  ["state", "migrate"],
  ["plugin", "trust"],
  ["hooks", "trust"],
];

/** True when `cliPath` is, or lies under, a fenced path, or is any trust or migrate command. */
export function isFenced(cliPath: readonly string[]): boolean {
  const lower = cliPath.map((s) => s.trim().toLowerCase());
  if (FENCED_PATHS.some((f) => f.every((seg, i) => lower[i] === seg))) return true;
  return lower.some((seg) => seg === "trust" || seg === "migrate");
}
