import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Entity } from "../../lifecycle/store.js";
import { liHome } from "../../lifecycle/paths.js";
import { childEnv } from "../../lifecycle/child-env.js";
import { sandboxSettings } from "../../config/sandbox-settings.js";
import { sandboxLayout } from "./layout.js";
import { homeView } from "./home-view.js";
import { hostSocketVars } from "../../config/sandbox-home.js";
import { endpointKeyVars, modelKeyVars } from "../gateway/plan.js";
import { checkLimits } from "./check-limits.js";

/*
 * A sandboxed run's check (--check-cmd, --check NAME) runs what the agent left in its worktree (a
 * Makefile, a package.json script): code the agent wrote. So it runs contained as the agent did
 * (docs/sandbox.md): the same mounts over the same worktree (the repository read-only whole, li's
 * home and credentials hidden, the home an allow-list, no provider's state at all), the environment
 * an agent gets (childEnv: no store address or credentials; no host socket variables) with a
 * private TMPDIR, no network at all, and the run's limits (check-limits.ts).
 */

export interface CheckBox {
  /** bubblewrap's argv up to the command it runs. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  close(): void;
}

/** The sandbox `e`'s check runs in, over its worktree, with `cwd` its directory. */
export async function checkBox(e: Entity, worktree: string, cwd: string): Promise<CheckBox> {
  const iso = e.spec.isolation!;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "li-check-"));
  const tmpDir = path.join(scratch, "tmp");
  fs.mkdirSync(tmpDir, { mode: 0o700 });
  const unreadable = path.join(scratch, "unreadable");
  fs.writeFileSync(unreadable, "", { mode: 0o000 });
  const { gitText } = await import("../worktree/git.js");
  const { registeredGitDir } = await import("../worktree/tree-git.js");
  const gitDir = iso.repo ? await registeredGitDir(iso.repo, worktree) : null;
  const common = iso.repo ? await gitText(["rev-parse", "--path-format=absolute", "--git-common-dir"], iso.repo) : null;
  const env: NodeJS.ProcessEnv = { ...childEnv(process.env), LI_CHECK: "1", TMPDIR: tmpDir };
  for (const k of hostSocketVars(env)) delete env[k];
  const home = env.HOME || os.homedir();
  const settings = sandboxSettings(e.spec.settings_dir ?? iso.repo ?? worktree);
  // No model API key either: the gateway keeps them from the agent, and the check's output is the run's.
  for (const k of modelKeyVars(env, endpointKeyVars(e.spec.settings_dir ?? iso.repo ?? worktree))) delete env[k];
  // The run's sandbox.limits: tmp sizes its tmpfs mounts, pids and memory a cgroup of its own.
  const limits = checkLimits(e.id, settings.limits);
  const layout = sandboxLayout({
    tree: worktree,
    tmpDir,
    provider: "",
    env,
    home,
    liHome: liHome(),
    readable: [],
    reopened: [],
    unreadable,
    settings,
    git: gitDir && common ? { common, gitDir, branch: null, worktree, own: null } : null,
    // The home as an agent sees it (its allow-list), with no provider's state at all.
    view: homeView({ home, tree: worktree, provider: "", env, settings }),
    privateState: null,
    tmpSize: limits.tmpSize,
  });
  return {
    argv: limits.wrap(["bwrap", ...layout.args, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--chdir", cwd, "--"]),
    env,
    close: () => {
      limits.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}
