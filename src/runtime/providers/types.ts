import type { Endpoint } from "../../endpoints.js";

/** Per-run provider settings, resolved from settings.yaml, never taken from a caller. */
export interface ProviderOptions {
  /** Where a provider that sends to an endpoint sends; the built-in default when absent. */
  endpoint?: Endpoint;
}

/** How the worker starts the provider's process. */
export interface LaunchSpec {
  argv: string[];
  /** `prompt` feeds the prompt snapshot on stdin. */
  stdin: "prompt" | "ignore";
  env?: Record<string, string>;
}

export interface Availability {
  available: boolean;
  detail: string;
  /** What to install or set when unavailable. */
  remedy?: string;
}

export interface Provider {
  name: string;
  summary: string;
  /** True when runs send to a named endpoint from settings (and so take --endpoint). */
  usesEndpoint?: boolean;
  /** Throws LiError(invalid_input) for a model this provider cannot run. */
  validateModel(model: string): void;
  availability(options: ProviderOptions): Availability;
  launch(model: string, promptFile: string, options: ProviderOptions): LaunchSpec;
}
