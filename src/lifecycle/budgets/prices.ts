import type { Price, PriceEntry } from "../../config/price-settings.js";
import type { Usage } from "../usage.js";

export type { Price, PriceEntry };

/*
 * Prices are data: a dated table shipped with li, which `prices:` in the user's settings.yaml
 * overrides or extends (config/price-settings.ts). A model no entry matches has no price, and a
 * USD budget refuses its runs rather than count them at $0.
 *
 * USD per million tokens. `cached_input` prices the input tokens read from the provider's cache;
 * li's usage counts them inside input_tokens whatever the provider reported (lifecycle/usage.ts:
 * OpenAI reports them inside its input count, Anthropic apart), so one formula prices every
 * provider. Anthropic's cache writes are counted as plain input.
 */

/** The shipped table and the day its figures were taken from the providers' price pages. */
export const PRICE_TABLE: { as_of: string; entries: readonly PriceEntry[] } = {
  as_of: "2026-11-01",
  entries: [
    { match: "claude/*opus*", input: 15, cached_input: 1.5, output: 75 },
    { match: "claude/*sonnet*", input: 3, cached_input: 0.3, output: 15 },
    { match: "claude/*haiku*", input: 0.8, cached_input: 0.08, output: 4 },
    { match: "codex/gpt-5-mini*", input: 0.25, cached_input: 0.025, output: 2 },
    { match: "codex/gpt-5*", input: 1.25, cached_input: 0.125, output: 10 },
    { match: "codex/o4-mini*", input: 1.1, cached_input: 0.275, output: 4.4 },
    { match: "openai/gpt-5-mini*", input: 0.25, cached_input: 0.025, output: 2 },
    { match: "openai/gpt-5*", input: 1.25, cached_input: 0.125, output: 10 },
    { match: "openai/gpt-4.1-mini*", input: 0.4, cached_input: 0.1, output: 1.6 },
    { match: "openai/gpt-4.1*", input: 2, cached_input: 0.5, output: 8 },
    { match: "openai/gpt-4o-mini*", input: 0.15, cached_input: 0.075, output: 0.6 },
    { match: "openai/gpt-4o*", input: 2.5, cached_input: 1.25, output: 10 },
    { match: "gemini/gemini-2.5-pro*", input: 1.25, cached_input: 0.31, output: 10 },
    { match: "gemini/gemini-2.5-flash-lite*", input: 0.1, cached_input: 0.025, output: 0.4 },
    { match: "gemini/gemini-2.5-flash*", input: 0.3, cached_input: 0.075, output: 2.5 },
    // The offline provider's demos and tests: $1 per million tokens, as mock/spend reports.
    { match: "mock/*", input: 1, cached_input: 1, output: 1 },
  ],
};

const globCache = new Map<string, RegExp>();
function glob(pattern: string): RegExp {
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp("^" + pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$");
    globCache.set(pattern, re);
  }
  return re;
}

/** The price of `model` (provider/model): the settings' entries first, then the shipped table. */
export function priceOf(model: string, overrides: readonly PriceEntry[] = []): (Price & { source: string }) | null {
  for (const e of overrides) if (glob(e.match).test(model)) return { input: e.input, cached_input: e.cached_input, output: e.output, source: `settings (${e.match})` };
  for (const e of PRICE_TABLE.entries) if (glob(e.match).test(model)) return { input: e.input, cached_input: e.cached_input, output: e.output, source: `li's table of ${PRICE_TABLE.as_of} (${e.match})` };
  return null;
}

/** What `u` costs at `p`. */
export function usdOf(u: Usage, p: Price): number {
  const cached = Math.min(u.cached_tokens, u.input_tokens);
  return ((u.input_tokens - cached) * p.input + cached * p.cached_input + u.output_tokens * p.output) / 1e6;
}

/** What a token budget counts: input plus output, cached input included. */
export const tokensOf = (u: Usage): number => u.input_tokens + u.output_tokens;
