import { Option, type Command } from "../commander.js";

/*
 * --isolate and its companions, on every command that starts runs (li agent, li o flow, li o
 * fanout, li play, li schedule create): a parser builder, so the MCP projector sees them too.
 */

export interface IsolateOptions {
  isolate?: "worktree" | "none";
  base?: string;
  carryChanges?: boolean;
  keepWorktree?: boolean;
}

export function addIsolateOptions(cmd: Command, scope: string): Command {
  return cmd
    .addOption(
      new Option("--isolate <mode>", `worktree: ${scope} works in its own git worktree on branch li/<run-id>, and its change is kept for li job diff / li job apply; none: in the directory itself (the default, unless a profile says isolate: worktree)`).choices(["worktree", "none"]),
    )
    .option("--base <ref>", "with --isolate worktree: the commit the worktree starts from (default: the checkout's HEAD)")
    .option("--carry-changes", "with --isolate worktree: carry the checkout's uncommitted tracked changes (staged and unstaged) into the worktree")
    .option("--keep-worktree", "with --isolate worktree: keep the worktree directory after the change is captured (the branch keeps it anyway)");
}

/** The options as the runtime takes them (runtime/worktree/isolation.ts IsolationChoice). */
export function isolationChoice(o: IsolateOptions): { isolate?: "worktree" | "none"; base?: string; carry_changes?: boolean; keep_worktree?: boolean } {
  return {
    ...(o.isolate !== undefined ? { isolate: o.isolate } : {}),
    ...(o.base !== undefined ? { base: o.base } : {}),
    ...(o.carryChanges ? { carry_changes: true } : {}),
    ...(o.keepWorktree ? { keep_worktree: true } : {}),
  };
}
