// A test never touches the repository it runs from: the jest run's global set-up notes the li/*
// branches of li's own checkout, and its teardown fails the run when new ones appeared (an
// isolated run whose cwd fell back to the checkout, as li() and the MCP helpers default to it).
// Linked worktrees of the same repository share its branches, and a test run in one of them would
// be blamed on this one: there the new branches are reported, not failed on.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

const git = (...args) => {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null; // not a git checkout (a packed tarball): nothing to guard
  }
};

export const liBranches = () => {
  const out = git("for-each-ref", "--format=%(refname:short)", "refs/heads/li/");
  return out === null ? null : new Set(out.split("\n").filter(Boolean));
};

export function guardStart() {
  globalThis.__liRepoBranches = liBranches();
}

export function guardEnd() {
  const before = globalThis.__liRepoBranches;
  const after = liBranches();
  if (!before || !after) return;
  const added = [...after].filter((b) => !before.has(b));
  if (!added.length) return;
  const linked = (git("worktree", "list", "--porcelain") ?? "").split("\n").filter((l) => l.startsWith("worktree ")).length > 1;
  const message = `the test run added ${added.length} li/* branch(es) to li's own repository (${ROOT}): ${added.join(", ")}; a test must run li in a repository it made (cwd), never in the checkout it runs from. Remove them with git branch -D.`;
  if (linked) console.warn(`li: warning (linked worktrees share branches, so another checkout's test run may have made them): ${message}`);
  else throw new Error(message);
}
