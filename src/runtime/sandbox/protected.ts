import path from "node:path";

/*
 * The places whose refusals a run's record always names (denials.ts): credentials, git metadata,
 * provider configuration, li's home and files that run code when a person or a tool opens them.
 * A path is protected when it lies under one of `roots` (li's home, the hidden paths, the git
 * directory, the provider state directories), or when one of its segments names such a place at
 * any depth. Only what the record names depends on it, never what the sandbox allows.
 */

/** Directory or file names that hold credentials, configuration that runs code, or git metadata. */
const NAMES = new Set([
  ".git", ".ssh", ".gnupg", ".aws", ".kube", ".docker", ".netrc", ".pgpass", ".git-credentials",
  ".gitconfig", ".gitmodules", ".gitattributes", ".envrc", ".mcp.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".ripgreprc",
  ".vscode", ".idea", ".husky", ".claude", ".claude.json", ".codex", ".gemini",
  ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".inputrc", ".pythonrc",
]);

/** `~/.config/<x>` directories of tools that run code from their configuration, or hold credentials. */
const CONFIG = new Set(["git", "gh", "gcloud", "fish", "nvim", "systemd", "autostart", "environment.d", "direnv"]);

export function protectedPlaces(roots: string[], home: string): (p: string) => boolean {
  const rs = roots.filter(Boolean).map((r) => r.replace(/\/+$/, ""));
  const config = path.join(home, ".config");
  return (p) => {
    if (rs.some((r) => p === r || p.startsWith(r + "/"))) return true;
    if (p.split("/").some((s) => NAMES.has(s))) return true;
    return p.startsWith(config + "/") && CONFIG.has(p.slice(config.length + 1).split("/")[0]);
  };
}
