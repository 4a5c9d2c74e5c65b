import { cliAgent, opt } from "./cli-agents.js";
import { codexThreadTotals } from "./codex-rollout.js";
import { codexAppServerLaunch } from "./codex-app-server/launch.js";
import type { Provider } from "./types.js";

/** `-c key=value` takes TOML; a JSON string is also a valid TOML basic string. */
const config = (key: string, value: string | undefined) => (value === undefined ? [] : ["-c", `${key}=${JSON.stringify(value)}`]);

/**
 * codex's --sandbox inside li's workspace sandbox (docs/sandbox.md#nesting): its own bubblewrap
 * cannot start there ("setting up uid map: Operation not permitted"), so every command would
 * fail. Off (danger-full-access) unless the profile asked for read-only, which is kept: its
 * commands then fail to start, stricter than li's sandbox would be, never looser.
 */
function insideLis(mode: string | undefined): string {
  return mode === "read-only" ? mode : "danger-full-access";
}

/*
 * `codex exec --json`: JSONL thread events (see streams/codex.ts). Flags go before the
 * `resume` subcommand; `-` reads the prompt from stdin, for a new thread and a resumed one.
 *
 * --skip-git-repo-check: outside a git repository codex exits 1 before doing anything ("Not
 * inside a trusted directory"), and li runs wherever it was asked to; the sandbox still applies.
 */
const exec = cliAgent({
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
  args: (model, run, sandboxed) => [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--model",
    model,
    ...opt("--sandbox", sandboxed ? insideLis(run.permission_mode) : run.permission_mode),
    ...config("model_reasoning_effort", run.effort),
    ...config("base_instructions", run.system_prompt),
    ...config("developer_instructions", run.append_system_prompt),
    ...(run.resume_session ? ["resume", run.resume_session] : []),
    "-",
  ],
  sessionTotals: codexThreadTotals,
});

/**
 * A run that asks (approvals: ask) goes through `codex app-server` instead, whose approval
 * requests li answers (issue 50; docs/decisions.md says why only asking runs). Its sandbox is
 * chosen as exec's is, workspace-write when the profile names none.
 */
export const codexProvider: Provider = {
  ...exec,
  launch(model, promptFile, options) {
    const run = options.run ?? {};
    if (run.approvals !== "ask") return exec.launch(model, promptFile, options);
    const sandbox = options.sandbox === "workspace" ? insideLis(run.permission_mode) : (run.permission_mode ?? "workspace-write");
    return codexAppServerLaunch(model, run, sandbox, exec.launch(model, promptFile, options).env);
  },
};
