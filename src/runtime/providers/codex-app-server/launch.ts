import { entryScript } from "../../../entrypoints.js";
import type { LaunchSpec, RunSettings } from "../types.js";
import { CODEX_CLIENT_ENV, type CodexClientConfig } from "./config.js";

/**
 * A codex run that asks: li's app-server client (client-main.ts) runs `codex app-server` and
 * writes li's ACP JSONL (streams/acp.ts). `sandbox` is codex's own, as the exec route chooses it.
 */
export function codexAppServerLaunch(model: string, run: RunSettings, sandbox: string, env: Record<string, string> = {}): LaunchSpec {
  const config: CodexClientConfig = {
    argv: ["codex", "app-server"],
    model,
    sandbox,
    ...(run.resume_session ? { resume: run.resume_session } : {}),
    ...(run.effort ? { config: { model_reasoning_effort: run.effort } } : {}),
    ...(run.system_prompt !== undefined ? { baseInstructions: run.system_prompt } : {}),
    ...(run.append_system_prompt !== undefined ? { developerInstructions: run.append_system_prompt } : {}),
  };
  return { argv: [process.execPath, entryScript("codex-client")], stdin: "prompt", stream: "acp", env: { ...env, [CODEX_CLIENT_ENV]: JSON.stringify(config) } };
}
