import fs from "node:fs";
import path from "node:path";
import { CODE_FILES, isCodeFile } from "../../config/code-files.js";

/*
 * The files that run code when a person or a tool opens the tree (config/code-files.ts) that a
 * checkout run's tree holds now: each is mounted read-only, so the agent can neither change nor
 * replace it. Those at the tree's top are found on disk; deeper ones from git's index (the tracked
 * ones), with one git call. An absent one is not mounted: bubblewrap would create it on the host.
 */
export async function markedIn(tree: string, git: boolean): Promise<string[]> {
  let top: string[] = [];
  try {
    top = fs.readdirSync(tree).filter((n) => isCodeFile(n) && n !== ".git");
  } catch {}
  const out = new Set(top.map((n) => path.join(tree, n)));
  if (git) {
    const { gitTextLight } = await import("../worktree/git.js");
    const specs = Object.keys(CODE_FILES).filter((n) => n !== ".git").flatMap((n) => [`:(glob)**/${n}`, `:(glob)**/${n}/**`]);
    try {
      for (const rel of (await gitTextLight(["-C", tree, "ls-files", "--", ...specs], tree)).split("\n")) {
        if (!rel) continue;
        // The shallowest part of the path that is one of them: a directory is mounted whole.
        const parts = rel.split("/");
        const at = parts.findIndex((p) => isCodeFile(p));
        if (at >= 0) out.add(path.join(tree, ...parts.slice(0, at + 1)));
      }
    } catch {}
  }
  return [...out];
}
