import { cliAgent, opt } from "./cli-agents.js";
import { codexThreadTotals } from "./codex-rollout.js";

/** `-c key=value` takes TOML; a JSON string is also a valid TOML basic string. */
const config = (key: string, value: string | undefined) => (value === undefined ? [] : ["-c", `${key}=${JSON.stringify(value)}`]);

/*
 * `codex exec --json`: JSONL thread events (see streams/codex.ts). Flags go before the
 * `resume` subcommand; `-` reads the prompt from stdin, for a new thread and a resumed one.
 *
 * --skip-git-repo-check: outside a git repository codex exits 1 before doing anything ("Not
 * inside a trusted directory"), and li runs wherever it was asked to; the sandbox still applies.
 */
export const codexProvider = cliAgent({
  name: "codex",
  bin: "codex",
  install: "npm install -g @openai/codex",
  stream: "codex",
  capabilities: {
    supports: {
      system_prompt: "-c base_instructions=…",
      append_system_prompt: "-c developer_instructions=…",
      permission_mode: "--sandbox",
      effort: "-c model_reasoning_effort=…",
      resume_session: "exec resume <thread_id>",
    },
    permission_modes: ["read-only", "workspace-write", "danger-full-access"],
    efforts: ["minimal", "low", "medium", "high", "xhigh"],
  },
  args: (model, run) => [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--model",
    model,
    ...opt("--sandbox", run.permission_mode),
    ...config("model_reasoning_effort", run.effort),
    ...config("base_instructions", run.system_prompt),
    ...config("developer_instructions", run.append_system_prompt),
    ...(run.resume_session ? ["resume", run.resume_session] : []),
    "-",
  ],
  sessionTotals: codexThreadTotals,
});
