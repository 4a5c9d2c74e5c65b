import { entryScript } from "../../entrypoints.js";
import { invalid } from "../../errors.js";
import type { Provider, ProviderOptions } from "./types.js";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

function resolved(options: ProviderOptions) {
  return {
    baseUrl: options.base_url ?? process.env.OPENAI_BASE_URL ?? OPENAI_DEFAULT_BASE_URL,
    keyEnv: options.api_key_env ?? "OPENAI_API_KEY",
    explicitUrl: Boolean(options.base_url ?? process.env.OPENAI_BASE_URL),
  };
}

/** Any OpenAI-compatible chat-completions endpoint, called by openai-agent.js in the run's process. */
export const openaiProvider: Provider = {
  name: "openai",
  summary: "an OpenAI-compatible chat-completions endpoint (base URL and key env from settings or flags)",
  validateModel(model) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/.test(model)) throw invalid(`${JSON.stringify(model)} is not a valid model name`, { model });
  },
  availability(options) {
    const r = resolved(options);
    try {
      const url = new URL(r.baseUrl);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    } catch {
      return { available: false, detail: `base URL ${r.baseUrl} is not an http(s) URL`, remedy: "set providers.openai.base_url or --base-url" };
    }
    // A self-hosted endpoint may need no key; the public default does.
    if (!process.env[r.keyEnv] && !r.explicitUrl)
      return { available: false, detail: `${r.keyEnv} is not set`, remedy: `export ${r.keyEnv}=… or set providers.openai.api_key_env` };
    return { available: true, detail: `${r.baseUrl} (key from ${r.keyEnv}${process.env[r.keyEnv] ? "" : ", unset"})` };
  },
  launch(model, promptFile, options) {
    const r = resolved(options);
    return {
      argv: [process.execPath, entryScript("openai-agent"), model, promptFile],
      stdin: "ignore",
      env: { LI_OPENAI_BASE_URL: r.baseUrl, LI_OPENAI_KEY_ENV: r.keyEnv },
    };
  },
};
