import { LiError, invalid } from "../../errors.js";
import { claudeProvider } from "./claude.js";
import { codexProvider } from "./codex.js";
import { geminiProvider } from "./gemini.js";
import { mockProvider } from "./mock.js";
import { openaiProvider } from "./openai.js";
import { acpProvider } from "./acp/provider.js";
import type { Provider, ProviderOptions } from "./types.js";

export const PROVIDERS: readonly Provider[] = [mockProvider, claudeProvider, codexProvider, geminiProvider, openaiProvider, acpProvider];

export interface ModelSpec {
  provider: Provider;
  model: string;
  spec: string;
}

/** `provider/model`, validated; an unknown provider or model is invalid input. */
export function parseModelSpec(text: string): ModelSpec {
  const slash = text.indexOf("/");
  if (slash <= 0 || slash === text.length - 1)
    throw invalid(`model must be provider/model (e.g. mock/echo), got ${JSON.stringify(text)}`, { field: "model", model: text });
  const name = text.slice(0, slash);
  const provider = PROVIDERS.find((p) => p.name === name);
  if (!provider)
    throw invalid(`unknown provider ${JSON.stringify(name)}; known providers: ${PROVIDERS.map((p) => p.name).join(", ")}`, {
      field: "model",
      provider: name,
      known: PROVIDERS.map((p) => p.name),
    });
  const model = text.slice(slash + 1);
  provider.validateModel(model);
  return { provider, model, spec: text };
}

/** Throws `unavailable` naming what to install or set. */
export function requireAvailable(spec: ModelSpec, options: ProviderOptions): void {
  const a = spec.provider.availability(options);
  if (!a.available)
    throw new LiError("unavailable", `provider ${spec.provider.name} is unavailable: ${a.detail}; ${a.remedy ?? ""}`.trim(), {
      provider: spec.provider.name,
      detail: a.detail,
      remedy: a.remedy ?? null,
    });
}
