import { builtinEndpoint } from "../../config/endpoints.js";
import { entryScript } from "../../entrypoints.js";
import { invalid } from "../../errors.js";
import type { Provider } from "./types.js";

/** Any OpenAI-compatible chat-completions endpoint, called by openai-agent.cjs in the run's process. */
export const openaiProvider: Provider = {
  name: "openai",
  summary: "an OpenAI-compatible chat-completions endpoint, named in settings (--endpoint NAME; see li doctor)",
  usesEndpoint: true,
  capabilities: {
    supports: { system_prompt: "a system message", append_system_prompt: "a system message", effort: "reasoning_effort" },
    efforts: ["minimal", "low", "medium", "high"],
  },
  validateModel(model) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/.test(model)) throw invalid(`${JSON.stringify(model)} is not a valid model name`, { model });
  },
  availability(options) {
    const e = options.endpoint ?? builtinEndpoint();
    try {
      const url = new URL(e.base_url);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    } catch {
      // Settings URLs are checked when settings load; only OPENAI_BASE_URL can get here.
      return { available: false, detail: `endpoint ${e.name}: base URL ${e.base_url} is not an http(s) URL`, remedy: "fix OPENAI_BASE_URL, or define an endpoint in settings.yaml and name it with --endpoint" };
    }
    const keySet = e.api_key_env !== null && Boolean(process.env[e.api_key_env]);
    if (e.key_required && !keySet)
      return { available: false, detail: `endpoint ${e.name}: ${e.api_key_env} is not set`, remedy: `export ${e.api_key_env}=… in the environment li runs in` };
    const key = e.api_key_env === null ? "no key" : `key from ${e.api_key_env}${keySet ? "" : ", unset"}`;
    return { available: true, detail: `endpoint ${e.name}: ${e.base_url} (${key})` };
  },
  launch(model, promptFile, options) {
    const e = options.endpoint ?? builtinEndpoint();
    const run = options.run ?? {};
    const system = [run.system_prompt, run.append_system_prompt].filter((s) => s !== undefined).join("\n\n");
    return {
      argv: [process.execPath, entryScript("openai-agent"), model, promptFile],
      stdin: "ignore",
      // The agent reads the key from the env var the endpoint names; "" means it sends none.
      env: { LI_OPENAI_BASE_URL: e.base_url, LI_OPENAI_KEY_ENV: e.api_key_env ?? "", LI_OPENAI_SYSTEM: system, LI_OPENAI_EFFORT: run.effort ?? "" },
      // openai-agent.cjs speaks li's own JSONL (streams/li.ts): text deltas, then the result.
      stream: "li",
    };
  },
};
