import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { liHome } from "../../lifecycle/paths.js";
import { sandboxSettings } from "../../config/sandbox-settings.js";
import { homePolicy, hostSocketVars } from "../../config/sandbox-home.js";
import { sandboxLayout, type GitLayout } from "./layout.js";
import { providerHosts } from "./hosts.js";
import { repoOf } from "./repo-of.js";
import { markedIn } from "./marked.js";
import { codeFileTool } from "../../config/code-files.js";
import { APPROVAL_SOCKET_ENV } from "../approvals/protocol.js";
import { effectiveLimits, type EffectiveLimit } from "./limits.js";
import { execOnlyDir } from "./exec-only.js";
import { cacheSummary } from "./exec-only-prune.js";

/*
 * What `li sandbox show` prints: the policy a workspace run of `provider` started in `cwd` would
 * get, from the same functions the worker mounts it with (sandbox-home.ts, layout.ts), for a run in
 * the checkout (an isolated run's tree is its own worktree, made when it starts). Nothing is made
 * or changed: paths the run would make (its TMPDIR, its private state directory) are named, not made.
 */

export interface SandboxDescription {
  cwd: string;
  tree: string;
  provider: string | null;
  home: { path: string; hidden: boolean };
  writable: string[];
  read_only: { path: string; why: string }[];
  hidden: string[];
  private: string[];
  provider_state: { dir: string; moved_by: string | null; config: string[]; state: string[]; credentials: string[]; private_copies: string[] } | null;
  /** The files in the tree that run code when it is opened (config/code-files.ts): read-only in a checkout run, marked in an isolated run's change; `why` names the tool. */
  marked: { path: string; why: string }[];
  hosts: string[];
  env_removed: string[];
  /** Each limit's value here and what enforces it, or why nothing does (docs/sandbox.md#limits); tmp bounds each of the places it names. */
  limits: { pids: EffectiveLimit; memory: EffectiveLimit; tmp: EffectiveLimit & { applies_to: string[] } };
  /** The exec-only copies of li's programs (docs/sandbox.md#what-the-agent-can-reach-of-lis-processes): how many, their bytes, how many are of earlier versions and how many may be removed now. */
  exec_only: ReturnType<typeof cacheSummary>;
}

function gitOf(cwd: string): { tree: string; git: GitLayout | null } {
  const known = repoOf(cwd);
  if (known && known !== "none") return { tree: known.top, git: { common: known.common, gitDir: known.common, branch: known.branch, worktree: null } };
  return { tree: cwd, git: null };
}

export function describeSandbox(cwd: string, provider: string | null, env: NodeJS.ProcessEnv): SandboxDescription {
  const settings = sandboxSettings(cwd);
  const { tree, git } = gitOf(cwd);
  const home = env.HOME || os.homedir();
  const view = homePolicy({ home, tree, provider: provider ?? "", env, settings });
  const layout = sandboxLayout({
    tree,
    tmpDir: path.join(liHome(), "runs", "<run>", "sandbox", "tmp"),
    provider: provider ?? "",
    env,
    home,
    liHome: liHome(),
    readable: [],
    reopened: [],
    unreadable: "/dev/null",
    settings,
    git,
    view,
    privateState: null,
  });
  const st = view.state;
  const readOnly = [...view.readOnly, ...layout.readOnly.filter((p) => !view.readOnly.some((s) => s.path === p)).map((p) => ({ path: p, why: st && p.startsWith(st.dir + "/") ? "provider configuration" : "git metadata" }))];
  return {
    cwd,
    tree,
    provider,
    home: { path: view.home, hidden: view.hideHome },
    writable: layout.writable.filter((p) => fs.existsSync(p)),
    read_only: readOnly,
    hidden: layout.hidden,
    private: layout.private,
    provider_state: st
      ? { dir: st.dir, moved_by: st.movedBy, config: st.config, state: st.state, credentials: st.credentials, private_copies: st.copies }
      : null,
    marked: markedIn(tree, !!git).map((p) => ({ path: p, why: codeFileTool(path.relative(tree, p)) })),
    hosts: [...(provider ? providerHosts(provider, env) : []), ...settings.allow_hosts],
    env_removed: hostSocketVars(env, [APPROVAL_SOCKET_ENV]),
    limits: (() => {
      const l = effectiveLimits(settings.limits);
      return { ...l, tmp: { ...l.tmp, applies_to: l.tmp.value !== null ? ["TMPDIR", ...layout.private] : [] } };
    })(),
    exec_only: cacheSummary(execOnlyDir()),
  };
}
