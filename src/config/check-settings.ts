import { fail, number } from "./settings-fields.js";

/*
 * Named checks an isolated run may ask for with --check NAME (settings.yaml):
 *   checks:
 *     test: npm test          # run in the run's worktree after its change is captured
 *   check_timeout_seconds: 600
 * A raw command (--check-cmd) is a CLI option only; over MCP a run names one of these, so an
 * agent never makes li run a shell command of its own choosing. Like worktree.setup, a project
 * file's checks count only once the file is trusted (li hooks trust): a command from an
 * untrusted project file never runs.
 */

export interface CheckSettings {
  /** NAME → shell command. */
  commands: Record<string, string>;
  timeout_seconds: number;
}

export const DEFAULT_CHECK_TIMEOUT_SECONDS = 600;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function parseCheckSettings(file: string, checks: unknown, timeout: unknown): { commands: Record<string, string>; timeout_seconds?: number } | undefined {
  if ((checks === undefined || checks === null) && (timeout === undefined || timeout === null)) return undefined;
  const commands: Record<string, string> = {};
  if (checks !== undefined && checks !== null) {
    if (typeof checks !== "object" || Array.isArray(checks)) fail(file, "checks", 'expected a map of names to shell commands, e.g. {test: "npm test"}');
    for (const [name, cmd] of Object.entries(checks as Record<string, unknown>)) {
      if (!NAME.test(name)) fail(file, `checks.${name}`, "a check's name is letters, digits, '.', '_' or '-' (at most 64)");
      if (typeof cmd !== "string" || !cmd.trim() || cmd.includes("\0")) fail(file, `checks.${name}`, "expected a shell command, e.g. npm test");
      commands[name] = cmd.trim();
    }
  }
  const out: { commands: Record<string, string>; timeout_seconds?: number } = { commands };
  if (timeout !== undefined && timeout !== null) out.timeout_seconds = number(file, "check_timeout_seconds", timeout, 1, 86_400, true);
  return out;
}

/** The files in force, in order (user, then a trusted project): a later file's names win. */
export function mergeCheckSettings(parts: (ReturnType<typeof parseCheckSettings> | undefined)[]): CheckSettings {
  const out: CheckSettings = { commands: {}, timeout_seconds: DEFAULT_CHECK_TIMEOUT_SECONDS };
  for (const p of parts) {
    if (!p) continue;
    Object.assign(out.commands, p.commands);
    if (p.timeout_seconds !== undefined) out.timeout_seconds = p.timeout_seconds;
  }
  return out;
}
