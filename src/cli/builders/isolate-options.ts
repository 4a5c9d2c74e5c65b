import { Option, type Command } from "../commander.js";
import { forMcp } from "./mcp-hints.js";

/*
 * --isolate and its companions, on every command that starts runs (li agent, li o flow, li o
 * fanout, li play, li schedule create): a parser builder, so the MCP projector sees them too.
 */

export interface IsolateOptions {
  isolate?: "worktree" | "none";
  base?: string;
  carryChanges?: boolean;
  keepWorktree?: boolean;
  checkCmd?: string;
  check?: string;
}

export function addIsolateOptions(cmd: Command, scope: string): Command {
  return cmd
    .addOption(
      new Option("--isolate <mode>", `worktree: ${scope} works in its own git worktree on branch li/<run-id>, and its change is kept for li job diff / li job apply; none: in the directory itself (the default, unless a profile says isolate: worktree)`).choices(["worktree", "none"]),
    )
    .option("--base <ref>", "with --isolate worktree: the commit the worktree starts from (default: the checkout's HEAD)")
    .option("--carry-changes", "with --isolate worktree: carry the checkout's uncommitted tracked changes (staged and unstaged) into the worktree")
    .option("--keep-worktree", "with --isolate worktree: keep the worktree directory after the change is captured (the branch keeps it anyway)")
    // CLI only: every spawn verb lists it in terminalFlags (verbs/schemas.ts CLI_ONLY_FLAGS), so no MCP caller can name a shell command.
    .option("--check-cmd <command>", `with --isolate worktree: after ${scope} ends and its change is captured, run this shell command in its worktree and record its exit status, duration and output tail as the run's check (what it writes is not part of the change)`)
    .addOption(
      forMcp(
        new Option("--check <name>", `with --isolate worktree: like --check-cmd, a check named in settings.yaml (checks: {NAME: "command"})`),
        `with isolate: worktree: a check named in li's settings (checks: {NAME: command}), run in ${scope === "this run" || scope === "each run" ? scope + "'s" : "each isolated run's"} worktree after its change is captured; its exit status, duration and output tail are the run's check (job.diff shows them)`,
      ),
    );
}

/** The options as the runtime takes them (runtime/worktree/isolation.ts IsolationChoice). */
export function isolationChoice(o: IsolateOptions): { isolate?: "worktree" | "none"; base?: string; carry_changes?: boolean; keep_worktree?: boolean; check_cmd?: string; check?: string } {
  return {
    ...(o.isolate !== undefined ? { isolate: o.isolate } : {}),
    ...(o.base !== undefined ? { base: o.base } : {}),
    ...(o.carryChanges ? { carry_changes: true } : {}),
    ...(o.keepWorktree ? { keep_worktree: true } : {}),
    ...(o.checkCmd !== undefined ? { check_cmd: o.checkCmd } : {}),
    ...(o.check !== undefined ? { check: o.check } : {}),
  };
}
