/*
 * Files that run code when a person or a tool opens a tree (docs/sandbox.md): an editor's tasks, a
 * shell's hook, a package manager's config, an agent CLI's hooks and MCP servers, git's own. One
 * list, as data: the sandbox makes them read-only in a checkout run, and an isolated run's change
 * that touches one is marked (li job diff, the fan-out comparison, the studio) and applied only
 * when a person accepts it (li job apply --accept-code-files). A name matches at any depth, as the
 * file or as a directory on the path; a tool that reads it only at a tree's top is matched at any
 * depth too, since a subdirectory is a tree's top when someone opens it. Not `.gitignore` (no
 * code) nor `.github/` (workflows are code a person reviews in a pull request).
 */

/** Each name, with the tool that runs what it holds. */
export const CODE_FILES: Readonly<Record<string, string>> = {
  // the anchor's list (@anthropic-ai/sandbox-runtime)
  ".gitconfig": "git (aliases, core.fsmonitor, core.pager)",
  ".gitmodules": "git (submodule update commands, URLs fetched)",
  ".bashrc": "bash",
  ".bash_profile": "bash",
  ".bash_login": "bash",
  ".profile": "sh",
  ".zshrc": "zsh",
  ".zshenv": "zsh",
  ".zprofile": "zsh",
  ".zlogin": "zsh",
  ".ripgreprc": "ripgrep (--pre runs a program)",
  ".mcp.json": "claude (MCP servers it starts)",
  ".vscode": "VS Code (tasks, launch configurations, extensions' settings)",
  ".idea": "JetBrains IDEs (run configurations, startup tasks)",
  ".claude": "claude (hooks, commands, agents, settings)",
  // issue 45's list
  ".envrc": "direnv (runs on cd)",
  ".gemini": "gemini (settings, hooks, MCP servers)",
  ".codex": "codex (config.toml: notify, MCP servers)",
  ".husky": "husky (git hooks)",
  ".gitattributes": "git (filter, diff and merge drivers)",
  ".npmrc": "npm (script-shell, node-options, registries)",
  ".yarnrc": "yarn 1 (yarn-path runs a program)",
  ".yarnrc.yml": "yarn (yarnPath, plugins)",
  // what else runs on opening, installing or committing
  ".pnpmfile.cjs": "pnpm (runs on install)",
  ".yarn": "yarn (releases and plugins yarnPath runs)",
  ".pre-commit-config.yaml": "pre-commit (hooks)",
  "lefthook.yml": "lefthook (git hooks)",
  ".lefthook.yml": "lefthook (git hooks)",
  ".devcontainer": "dev containers (postCreateCommand)",
  ".cursor": "Cursor (MCP servers, rules)",
  ".windsurf": "Windsurf (workflows, MCP servers)",
  ".zed": "Zed (tasks, language servers)",
  ".helix": "Helix (language servers)",
  ".exrc": "vi/vim (exrc)",
  ".vimrc": "vim (exrc)",
  ".nvimrc": "neovim (exrc)",
  ".nvim.lua": "neovim (exrc)",
  ".gdbinit": "gdb",
  ".lldbinit": "lldb",
  ".git": "git (a nested repository's config and hooks)",
  ".hg": "Mercurial (a nested repository's hgrc: hooks, extensions)",
  // agents li runs over ACP, and other coding agents' project settings (MCP servers, hooks, plugins)
  ".qwen": "Qwen Code (settings, hooks, MCP servers)",
  ".opencode": "opencode (plugins, commands, MCP servers)",
  "opencode.json": "opencode (plugins, MCP servers)",
  "opencode.jsonc": "opencode (plugins, MCP servers)",
  ".aider.conf.yml": "aider (lint-cmd, test-cmd it runs)",
  ".continue": "Continue (MCP servers)",
  ".kiro": "Kiro (hooks, MCP servers)",
  ".amazonq": "Amazon Q (MCP servers)",
  ".roo": "Roo Code (MCP servers)",
  // tools that run what the directory holds when started or opened there
  ".pylintrc": "pylint (init-hook), run by editors on open",
  "pylintrc": "pylint (init-hook), run by editors on open",
  ".pdbrc": "pdb (runs its lines as Python)",
  ".irbrc": "irb (Ruby)",
  ".pryrc": "pry (Ruby)",
  ".dir-locals.el": "Emacs (eval variables)",
  ".dir-locals-2.el": "Emacs (eval variables)",
  ".lvimrc": "vim's localvimrc",
  "mise.toml": "mise (hooks and env scripts on cd)",
  ".mise.toml": "mise (hooks and env scripts on cd)",
  ".mise": "mise (hooks and env scripts on cd)",
  ".cargo": "cargo (config.toml: runner, rustc-wrapper, aliases)",
  ".mvn": "Maven (extensions, jvm.config, the wrapper's download)",
  ".li": "li (project settings: worktree setup, checks, ACP agents)",
};

/** Whether `rel` (a path in a tree, `/`-separated) is one of them or lies under one. */
export function isCodeFile(rel: string): boolean {
  return rel.split("/").some((part) => Object.prototype.hasOwnProperty.call(CODE_FILES, part));
}

/** The tool that runs what `rel` holds, by its shallowest part that is one of them ("" if none is). */
export function codeFileTool(rel: string): string {
  const part = rel.split("/").find((p) => Object.prototype.hasOwnProperty.call(CODE_FILES, p));
  return part ? CODE_FILES[part] : "";
}

/** The paths of `files` that run code, each once, in their order (a rename counts by either name). */
export function codeFilesOf(files: { path: string; old_path?: string }[]): string[] {
  const out: string[] = [];
  for (const f of files) for (const p of [f.old_path, f.path]) if (p && isCodeFile(p) && !out.includes(p)) out.push(p);
  return out;
}

/** `files` with `runs_code: true` on each that runs code: how li job diff, the fan-out comparison and the studio mark them. */
export function markCodeFiles<F extends { path: string; old_path?: string }>(files: F[]): (F & { runs_code?: true })[] {
  return files.map((f) => (codeFilesOf([f]).length ? { ...f, runs_code: true as const } : f));
}

/** The flag with which a person applies a change that touches them. */
export const ACCEPT_CODE_FILES_FLAG = "--accept-code-files";
