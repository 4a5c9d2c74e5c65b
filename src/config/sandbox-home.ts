import fs from "node:fs";
import path from "node:path";
import type { SandboxSettings } from "./sandbox-fields.js";
import { otherProviderState, providerStateRule, type ProviderStateRule } from "./provider-state.js";

/*
 * What a workspace sandbox shows of the person's home and of the host's shared scratch places, as
 * data (docs/sandbox.md#the-home-is-an-allow-list): the runtime mounts it, `li sandbox show` prints
 * it, tests read it. The home is hidden (an empty read-only tmpfs) except what is named here; /tmp,
 * /var/tmp, /dev/shm, /run and $XDG_RUNTIME_DIR are empty and private to the run, so no socket of
 * the host there (tmux's, an ssh-agent's, a database's) can be reached.
 */

export interface ShownPath {
  path: string;
  /** Why it shows, for `li sandbox show` and the docs. */
  why: string;
}

export interface SandboxHomePolicy {
  home: string;
  /** False only when the run's tree holds the home itself (a run started in it), or there is none. */
  hideHome: boolean;
  /** Read-only through the hidden home or a private directory. */
  readOnly: ShownPath[];
  /** Empty, writable and the run's own: a tmpfs each. */
  private: string[];
  /** The run's provider's state directory (provider-state.ts), or null. */
  state: ProviderStateRule | null;
  /** The other providers' state: hidden even where the home is not. */
  otherState: string[];
}

export interface HomePolicyInput {
  home: string;
  tree: string;
  provider: string;
  /** The provider's environment: its PATH, a moved state directory, XDG_RUNTIME_DIR. */
  env: NodeJS.ProcessEnv;
  settings: SandboxSettings;
}

const FIXED_PRIVATE = ["/tmp", "/var/tmp", "/dev/shm", "/run"];

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith("/") ? root : root + "/");
const isDir = (p: string) => {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
};
const realOr = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
};

/** Where a program that a PATH entry links to is installed: its package in a node_modules (nvm's globals), else its own directory (~/.local/share/claude/versions). */
function prefixOf(target: string): string {
  const parts = target.split("/");
  const nm = parts.lastIndexOf("node_modules");
  if (nm >= 0 && nm + 1 < parts.length - 1) return parts.slice(0, nm + (parts[nm + 1].startsWith("@") ? 3 : 2)).join("/");
  return path.dirname(target);
}

/** The PATH directories under a hidden or private root, the prefixes they belong to, and where their links lead. */
function programs(env: NodeJS.ProcessEnv, home: string, roots: string[]): ShownPath[] {
  const out: ShownPath[] = [];
  for (const entry of (env.PATH ?? "").split(":")) {
    if (!path.isAbsolute(entry) || !isDir(entry)) continue;
    const dir = realOr(entry);
    // A PATH entry that is the home or /tmp itself shows nothing of it: only what lies below counts.
    if (roots.includes(dir) || !roots.some((r) => under(dir, r))) continue;
    out.push({ path: dir, why: "on PATH" });
    if (path.basename(dir) === "bin") {
      // A bin directory's prefix holds what its programs load (nvm's lib/node_modules, a go or
      // cargo tree); for ~/.local and the home itself only lib (python's user site): the rest of
      // ~/.local (share/, state/) is other programs' data.
      const prefix = path.dirname(dir);
      if (prefix === home || prefix === path.join(home, ".local")) {
        if (isDir(path.join(prefix, "lib"))) out.push({ path: path.join(prefix, "lib"), why: `the libraries of ${entry}` });
      } else if (prefix !== "/" && roots.some((r) => under(prefix, r) && prefix !== r)) out.push({ path: prefix, why: `the install prefix of ${entry}` });
    }
    let entries: fs.Dirent[] = [];
    try {
      // The directory's own entry types: no stat per program (a pyenv shims folder holds hundreds).
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const ent of entries) {
      if (!ent.isSymbolicLink()) continue;
      const name = ent.name;
      const p = path.join(dir, name);
      let target: string;
      try {
        target = fs.realpathSync(p);
      } catch {
        continue;
      }
      if (under(target, dir) || !roots.some((r) => under(target, r))) continue;
      out.push({ path: prefixOf(target), why: `where ${path.join(entry, name)} leads` });
    }
  }
  return out;
}

/** The sandbox's view of the home and the shared scratch places for one run. */
export function homePolicy(i: HomePolicyInput): SandboxHomePolicy {
  const home = path.resolve(i.home);
  const hideHome = home !== "/" && isDir(home) && !under(home, i.tree);
  const xdg = i.env.XDG_RUNTIME_DIR;
  const priv = [...FIXED_PRIVATE];
  // Under /run it is made afresh inside the private /run; elsewhere it is a private tmpfs of its own.
  if (xdg && path.isAbsolute(xdg) && !under(xdg, home) && !priv.includes(path.normalize(xdg))) priv.push(path.normalize(xdg));
  const roots = [...(hideHome ? [home] : []), ...priv];
  const shown: ShownPath[] = [...programs(i.env, home, roots)];
  // Python's user site (~/.local/lib/pythonX.Y), whether or not ~/.local/bin is on PATH.
  const localLib = path.join(home, ".local", "lib");
  if (isDir(localLib)) for (const n of fs.readdirSync(localLib)) if (/^python\d/.test(n)) shown.push({ path: path.join(localLib, n), why: "python's user site" });
  for (const f of [".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes"]) shown.push({ path: path.join(home, f), why: "git's own configuration" });
  for (const p of i.settings.allow_read) shown.push({ path: p, why: "sandbox.allow_read" });
  const seen = new Set<string>();
  const readOnly = shown.filter((s) => fs.existsSync(s.path) && !seen.has(s.path) && !!seen.add(s.path));
  return { home, hideHome, readOnly, private: priv, state: providerStateRule(i.provider, i.env, home), otherState: otherProviderState(i.provider, home) };
}

/*
 * Variables that name a socket or a server of the host's session: removed from the provider's
 * environment. A variable whose value is the path of an existing socket (or `unix:path=` one) goes
 * too, whatever its name; the mounts are what keep the socket away, this keeps the agent from
 * being told where it is.
 */
export const HOST_SOCKET_VARS = [
  "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "DOCKER_CONTEXT",
  "CONTAINER_HOST", "PODMAN_HOST", "TMUX", "TMUX_PANE", "STY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DISPLAY", "XAUTHORITY", "PULSE_SERVER",
  "SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE", "KITTY_LISTEN_ON", "NVIM", "NVIM_LISTEN_ADDRESS", "VSCODE_IPC_HOOK_CLI",
  "VSCODE_GIT_IPC_HANDLE", "ZELLIJ", "ZELLIJ_SESSION_NAME", "EMACS_SOCKET_NAME", "KRB5CCNAME", "SYSTEMD_EXEC_PID", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
];

/** The names of `env`'s variables that point at the host's sockets, but for li's own (`keep`). */
export function hostSocketVars(env: NodeJS.ProcessEnv, keep: string[] = []): string[] {
  return Object.keys(env).filter((k) => {
    if (keep.includes(k)) return false;
    if (HOST_SOCKET_VARS.includes(k)) return true;
    const v = env[k];
    if (!v || v.length > 4096) return false;
    const p = v.replace(/^unix:(?:path=|\/\/)?/, "").split(/[,;]/)[0];
    if (!p.startsWith("/")) return false;
    try {
      return fs.statSync(p).isSocket();
    } catch {
      return false;
    }
  });
}
