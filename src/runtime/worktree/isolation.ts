import { loadSettings } from "../../config/settings.js";
import { invalid } from "../../errors.js";
import { FILE_ROOTS_ENV } from "../submit/file-roots.js";
import { linkInCommit, repoAt, resolveBase, uncommitted } from "./locate.js";

/*
 * What a run records about its isolation at submit (spec.isolation), and the checks made before
 * any record exists. The worker fills in where the worktree is when it makes it (run-worktree.ts).
 */

export interface IsolationSpec {
  mode: "worktree";
  /** --base as given; null for the checkout's HEAD. */
  base: string | null;
  /** The commit the worktree starts from, resolved where the checkout is (at submit for a local run, at claim for a placed one). */
  base_sha: string | null;
  carry_changes: boolean;
  keep_worktree: boolean;
  /** --check-cmd or --check NAME, resolved at submit: run in the worktree after the change is captured. */
  check?: IsolationCheck;
  /** A resumed run: the run whose worktree and branch it goes on in. */
  continues?: string;
  /** Filled in by the worker: the checkout's root on the run's host, the cwd's place in it, the branch and the worktree. */
  repo?: string;
  rel?: string;
  branch?: string;
  worktree?: string;
  /** Set once the worktree is made and set up, just before the agent starts: only then is what it holds the run's change. */
  ready?: boolean;
  /** Set by the capture when the worktree's `.git` file no longer said what git wrote there (what was found). */
  tampered?: string;
}

/** A run's check: the command (a settings name's, or --check-cmd's, then name null) and its bound. */
export interface IsolationCheck {
  name: string | null;
  command: string;
  timeout_seconds: number;
}

/** The isolation options as any spawn command or profile gives them. */
export interface IsolationChoice {
  isolate?: "worktree" | "none";
  base?: string;
  carry_changes?: boolean;
  keep_worktree?: boolean;
  /** A raw shell command (the CLI only; no MCP schema has it). */
  check_cmd?: string;
  /** A check named in settings (checks: {NAME: command}). */
  check?: string;
}

/**
 * The isolation a run asks for: --isolate wins over a profile's `isolate`; the companions need
 * worktree isolation, and are refused without it rather than ignored.
 */
export function isolationWanted(choice: IsolationChoice, profileIsolate: "worktree" | "none" | null | undefined, settingsDir = process.cwd()): IsolationSpec | null {
  const mode = choice.isolate ?? profileIsolate ?? "none";
  if (mode !== "worktree") {
    const stray =
      choice.base !== undefined ? "--base" : choice.carry_changes ? "--carry-changes" : choice.keep_worktree ? "--keep-worktree" : choice.check_cmd !== undefined ? "--check-cmd" : choice.check !== undefined ? "--check" : null;
    if (stray) throw invalid(`${stray} applies only to an isolated run; add --isolate worktree`, { field: stray.slice(2).replace(/-/g, "_") });
    return null;
  }
  if (choice.base !== undefined && (choice.base === "" || choice.base.startsWith("-")))
    throw invalid(`--base ${JSON.stringify(choice.base)} is not a commit; give a commit, branch or tag`, { field: "base" });
  const check = checkWanted(choice, settingsDir);
  return { mode: "worktree", base: choice.base ?? null, base_sha: null, carry_changes: !!choice.carry_changes, keep_worktree: !!choice.keep_worktree, ...(check ? { check } : {}) };
}

/** --check-cmd as given, or --check NAME looked up in the settings in force; an unknown name is refused with the names there are. */
function checkWanted(choice: IsolationChoice, settingsDir: string): IsolationCheck | null {
  if (choice.check_cmd === undefined && choice.check === undefined) return null;
  if (choice.check_cmd !== undefined && choice.check !== undefined) throw invalid("give --check-cmd or --check, not both", { field: "check" });
  const settings = loadSettings(settingsDir).checks;
  if (choice.check_cmd !== undefined) {
    // No MCP schema has it; this also stops one inside a schedule's action words, under MCP.
    if (process.env[FILE_ROOTS_ENV] !== undefined)
      throw invalid(`--check-cmd is a CLI option only: over MCP, name a check defined in settings (check: NAME${Object.keys(settings.commands).length ? `; the checks defined are: ${Object.keys(settings.commands).sort().join(", ")}` : ""})`, { field: "check_cmd" });
    if (!choice.check_cmd.trim() || choice.check_cmd.includes("\0")) throw invalid("--check-cmd needs a shell command, e.g. --check-cmd 'npm test'", { field: "check_cmd" });
    return { name: null, command: choice.check_cmd, timeout_seconds: settings.timeout_seconds };
  }
  const names = Object.keys(settings.commands).sort();
  const command = Object.prototype.hasOwnProperty.call(settings.commands, choice.check!) ? settings.commands[choice.check!] : undefined;
  if (command === undefined)
    throw invalid(
      `no check named ${JSON.stringify(choice.check)} in settings; ${names.length ? `the checks defined are: ${names.join(", ")}` : 'none is defined (settings.yaml: checks: {NAME: "command"})'}`,
      { field: "check", check: choice.check, checks: names },
    );
  return { name: choice.check!, command, timeout_seconds: settings.timeout_seconds };
}

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * Checked before any record exists. A local run's checkout is here: it must be a git work tree
 * with commits, and its base is resolved now, so a run that waits in a queue still starts from
 * the commit it was submitted at. A placed run's checkout is on the host that claims it, which
 * resolves the base there (a full SHA given as --base pins it). `note` says what is left out.
 */
export async function prepareIsolation(iso: IsolationSpec, cwd: string, placed: boolean): Promise<{ spec: IsolationSpec; note: string | null }> {
  if (placed) return { spec: { ...iso, base_sha: iso.base && FULL_SHA.test(iso.base) ? iso.base : null }, note: null };
  const repo = await repoAt(cwd);
  const base_sha = await resolveBase(repo.root, iso.base ?? undefined);
  const link = await linkInCommit(repo.root, base_sha, repo.rel);
  if (link)
    throw invalid(
      `${link} is a symlink in ${iso.base ?? "HEAD"} (${base_sha.slice(0, 12)}), and the run would start in ${repo.rel} of its worktree: its agent would start outside the worktree, so li refuses; run from a directory that is a directory in that commit (the repository's root, say)`,
      { cwd, link, base_sha, reason: "start_outside_worktree" },
    );
  let note: string | null = null;
  if (!iso.carry_changes) {
    const left = await uncommitted(repo.root);
    const parts = [left.tracked ? `${left.tracked} changed tracked file${left.tracked === 1 ? "" : "s"}` : "", left.untracked ? `${left.untracked} untracked file${left.untracked === 1 ? "" : "s"}` : ""].filter(Boolean);
    if (parts.length)
      note = `li: note: the isolated run starts from ${base_sha.slice(0, 12)}${iso.base ? ` (${iso.base})` : " (HEAD)"}; ${parts.join(" and ")} in ${repo.root} ${parts.length > 1 || left.tracked + left.untracked > 1 ? "are" : "is"} left out (--carry-changes carries the tracked ones)`;
  }
  // The worker of a run started here starts from what was checked now, without asking git again.
  return { spec: { ...iso, base_sha, repo: repo.root, rel: repo.rel }, note };
}

/** The request part of a recorded isolation, for a run made again from it (a rerun, a fan-out's worker): where its own worktree is, it finds out. */
export function freshIsolation(iso: IsolationSpec): IsolationSpec {
  return { mode: "worktree", base: iso.base, base_sha: iso.base_sha, carry_changes: iso.carry_changes, keep_worktree: iso.keep_worktree, repo: iso.repo, rel: iso.rel, ...(iso.check ? { check: iso.check } : {}) };
}
