import type { AcpAgent } from "../../config/acp-agents.js";
import type { Endpoint } from "../../config/endpoints.js";
import type { Usage } from "../../lifecycle/usage.js";

/**
 * What a run may ask of its provider beyond model and prompt. Everything but the two limits and
 * the resumed session comes from a profile, never from a caller (see profiles.ts): these grant
 * permissions, so only whoever writes settings decides them.
 */
export interface RunSettings {
  system_prompt?: string;
  append_system_prompt?: string;
  permission_mode?: string;
  allowed_tools?: string[];
  disallowed_tools?: string[];
  effort?: string;
  max_turns?: number;
  max_budget_usd?: number;
  /** An absolute path to an MCP servers file for this run alone. */
  mcp_config?: string;
  /** The provider session (or thread) a resumed run continues. */
  resume_session?: string;
  /** `ask`: permission prompts go to li's approvals inbox instead of being denied (docs/approvals.md). */
  approvals?: "ask";
  /** Seconds a request may wait for its answer (the run's recorded approval_timeout). */
  approval_timeout_seconds?: number;
}

export type RunField = keyof RunSettings;

/** Per-run provider settings, resolved from settings.yaml (endpoint, profile) when the worker starts the run. */
export interface ProviderOptions {
  /** Where a provider that sends to an endpoint sends; the built-in default when absent. */
  endpoint?: Endpoint;
  run?: RunSettings;
  /**
   * The run is inside li's workspace sandbox (spec.sandbox): the provider's own sandbox is
   * turned off or told so, li's covering its whole process tree (docs/sandbox.md#nesting).
   */
  sandbox?: "workspace";
  /** An acp/NAME run's entry, resolved from the run's settings (runtime/submit/acp-agents.ts). */
  acp_agent?: AcpAgent;
  /** For a resumed run: when the run it continues ended (ISO), read from the store by the worker. */
  resumed_ended_at?: string;
}

/** How a provider's stdout is read: plain text, or the machine-readable stream of one CLI. */
export type StreamFormat = "text" | "claude" | "codex" | "gemini" | "li" | "acp";

/** How the worker starts the provider's process. */
export interface LaunchSpec {
  argv: string[];
  /** `prompt` feeds the prompt snapshot on stdin. */
  stdin: "prompt" | "ignore";
  env?: Record<string, string>;
  stream: StreamFormat;
}

export interface Availability {
  available: boolean;
  detail: string;
  /** What to install or set when unavailable. */
  remedy?: string;
}

/** Which RunSettings a provider can honour, and how (the text goes into refusals and docs). */
export interface Capabilities {
  supports: Partial<Record<RunField, string>>;
  /** The permission modes it accepts, when it supports permission_mode. */
  permission_modes?: readonly string[];
  efforts?: readonly string[];
}

export interface Provider {
  name: string;
  summary: string;
  /** True when runs send to a named endpoint from settings (and so take --endpoint). */
  usesEndpoint?: boolean;
  capabilities: Capabilities;
  /** Throws LiError(invalid_input) for a model this provider cannot run. */
  validateModel(model: string): void;
  availability(options: ProviderOptions): Availability;
  launch(model: string, promptFile: string, options: ProviderOptions): LaunchSpec;
  /**
   * For a provider whose stream reports a resumed session's running totals rather than the run's
   * own (codex): those totals as its own records give them now, before a resumed run starts, in
   * the environment the run will have; undefined when li cannot read them.
   */
  sessionTotals?(session: string, env: NodeJS.ProcessEnv): Usage | undefined;
}
