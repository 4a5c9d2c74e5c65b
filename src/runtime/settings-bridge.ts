import type { ProviderOptions } from "./providers/types.js";

/**
 * Placeholder seam between commands and settings.yaml: validates --notify names and
 * merges provider options from settings. The settings module replaces the bodies.
 */
export function loadNotifySelection(names: string[] | undefined): string[] {
  return names ?? [];
}

export function providerOptions(_model: string, flags: ProviderOptions): ProviderOptions {
  const out: ProviderOptions = {};
  if (flags.base_url) out.base_url = flags.base_url;
  if (flags.api_key_env) out.api_key_env = flags.api_key_env;
  return out;
}
