import os from "node:os";
import path from "node:path";

/*
 * Each provider CLI's state directory under `--sandbox workspace` (docs/sandbox.md#provider-state),
 * as data. Inside the sandbox the directory is a private one of the run's, empty but for:
 *   - `config`: its configuration and extension points, the person's, read-only (what would run
 *     as the person the next time they start the CLI: settings, hooks, commands, agents, skills,
 *     plugins, MCP server lists, memory files);
 *   - `state`: its session state, the person's, writable, so result, usage and resume keep working
 *     and a refreshed OAuth token is kept (a run never logs the person out);
 *   - `credentials`: tokens the CLI refreshes, copied in and written back when they changed;
 *   - `copies`: files that mix the two (`.claude.json`), copied in per run and never written back.
 * Anything else the CLI writes there lands in the private directory and goes with the run. Each
 * list is an allow-list: a name not on it is neither the person's to read nor theirs to keep.
 */

export interface ProviderStateRule {
  /** Where the CLI keeps its state for this environment. */
  dir: string;
  /** The variable that moved it (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME), when one did. */
  movedBy: string | null;
  config: string[];
  /** Names in `dir`; one ending in `/` is a directory li makes in the person's state directory before the run, so that sessions started inside are kept. */
  state: string[];
  /** Names in `dir` of tokens the CLI refreshes: a private copy, written back when it changed (still JSON), so a run never logs the person out. */
  credentials: string[];
  /** Absolute paths of mixed files, copied privately (their own place, which may be outside `dir`). */
  copies: string[];
}

interface Spec {
  home: (env: NodeJS.ProcessEnv, home: string) => { dir: string; movedBy: string | null };
  config: string[];
  state: string[];
  credentials: string[];
  /** Mixed files, relative to the home unless the state directory was moved (claude reads `.claude.json` beside CLAUDE_CONFIG_DIR's contents then). */
  copies: (dir: string, home: string, moved: boolean) => string[];
}

const movable = (v: string, sub: string, inHome: (value: string) => string) => (env: NodeJS.ProcessEnv, home: string) => {
  const value = env[v];
  return value && path.isAbsolute(value) ? { dir: inHome(value), movedBy: v } : { dir: path.join(home, sub), movedBy: null };
};

const SPECS: Record<string, Spec> = {
  claude: {
    home: movable("CLAUDE_CONFIG_DIR", ".claude", (v) => v),
    config: ["settings.json", "settings.local.json", "CLAUDE.md", "commands", "agents", "skills", "plugins", "hooks", "output-styles", "rules", "keybindings.json", "managed-settings.json", ".mcp.json"],
    // Not shell-snapshots/ nor session-env/: claude runs the scripts there ahead of every Bash
    // command without asking, so a person's live session would run what an agent wrote; nor ide/,
    // whose lock files tell the person's claude which IDE server to connect to, nor statsig/, the
    // feature gates it obeys until it next fetches them. Each run has its own.
    state: ["projects/", "todos/", "file-history/", "plans/", "tasks/", "history.jsonl", "paste-cache/", "stats-cache.json"],
    credentials: [".credentials.json"],
    copies: (dir, home, moved) => [path.join(moved ? dir : home, ".claude.json")],
  },
  codex: {
    home: movable("CODEX_HOME", ".codex", (v) => v),
    config: ["config.toml", "managed_config.toml", "requirements.toml", "AGENTS.md", "AGENTS.override.md", "instructions.md", "prompts", "skills", "rules", "hooks", "hooks.json", "plugins", "agents"],
    // codex's SQLite files (thread index, history) are private per run: their WAL beside them must
    // be the same file for every writer, so half of a database cannot be bound in.
    state: ["sessions/", "archived_sessions/", "history.jsonl", "log/", "installation_id"],
    credentials: ["auth.json"],
    copies: () => [],
  },
  gemini: {
    // GEMINI_CLI_HOME stands for the home: gemini keeps `.gemini` under it.
    home: movable("GEMINI_CLI_HOME", ".gemini", (v) => path.join(v, ".gemini")),
    config: ["settings.json", "GEMINI.md", "AGENTS.md", "commands", "extensions", "agents", "skills", "policies", "hooks", "system-settings.json", ".env", "trustedFolders.json"],
    // Not history/: checkpointing's shadow git repositories, whose .git/config the person's gemini
    // would obey (core.fsmonitor) at its next checkpoint of that project. Each run has its own.
    state: ["tmp/", "projects.json", "installation_id", "user_id"],
    credentials: ["oauth_creds.json", "google_accounts.json", "mcp-oauth-tokens.json"],
    copies: () => [],
  },
};

export const STATE_PROVIDERS = Object.keys(SPECS);

/** The state rule of `provider`'s CLI for a run with `env`, or null for a provider with no state directory of its own (mock, openai). */
export function providerStateRule(provider: string, env: NodeJS.ProcessEnv, home = env.HOME || os.homedir()): ProviderStateRule | null {
  const spec = SPECS[provider];
  if (!spec) return null;
  const { dir, movedBy } = spec.home(env, home);
  return { dir, movedBy, config: spec.config, state: spec.state, credentials: spec.credentials, copies: spec.copies(dir, home, movedBy !== null) };
}

/** Where each other provider keeps its state, for this home: hidden from a run of `provider`. */
export function otherProviderState(provider: string, home: string): string[] {
  return STATE_PROVIDERS.filter((p) => p !== provider).flatMap((p) => {
    const r = providerStateRule(p, {}, home)!;
    return [r.dir, ...r.copies];
  });
}
