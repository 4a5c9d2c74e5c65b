/* What the worker tells the codex app-server client (client-main.ts), in LI_CODEX_CLIENT as JSON. */
export const CODEX_CLIENT_ENV = "LI_CODEX_CLIENT";

export interface CodexClientConfig {
  /** `codex app-server` and its flags. */
  argv: string[];
  model: string;
  /** thread/start's sandbox: read-only, workspace-write or danger-full-access. */
  sandbox: string;
  /** The thread a resumed run continues (thread/resume). */
  resume?: string;
  /** thread/start's config overrides (model_reasoning_effort). */
  config?: Record<string, string>;
  baseInstructions?: string;
  developerInstructions?: string;
}

export function parseCodexConfig(text: string | undefined): CodexClientConfig {
  if (!text) throw new Error(`${CODEX_CLIENT_ENV} is not set: this process is started by li's worker`);
  const c = JSON.parse(text) as CodexClientConfig;
  if (!Array.isArray(c.argv) || !c.argv.length || typeof c.model !== "string" || typeof c.sandbox !== "string") throw new Error(`${CODEX_CLIENT_ENV}: argv, model and sandbox are required`);
  return c;
}
