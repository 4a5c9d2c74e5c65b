/** Per-run provider settings, from settings.yaml or flags. */
export interface ProviderOptions {
  base_url?: string;
  api_key_env?: string;
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
  /** Throws LiError(invalid_input) for a model this provider cannot run. */
  validateModel(model: string): void;
  availability(options: ProviderOptions): Availability;
  launch(model: string, promptFile: string, options: ProviderOptions): LaunchSpec;
}
