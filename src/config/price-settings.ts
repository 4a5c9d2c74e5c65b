import { closed, fail, number } from "./settings-fields.js";

/*
 * prices: in the user settings file, USD per million tokens by provider/model (`*` matches any
 * run of characters), checked before li's shipped table:
 *   prices:
 *     "codex/gpt-5*": {input: 1.25, cached_input: 0.125, output: 10}
 * Only the user file may set them: a project file lowering a price would loosen the user's budgets.
 */
/** USD per million tokens; `cached_input` prices the input tokens read from the provider's cache. */
export interface Price {
  input: number;
  cached_input: number;
  output: number;
}

export interface PriceEntry extends Price {
  /** provider/model, where `*` matches any run of characters. */
  match: string;
}

export function parsePriceSettings(file: string, value: unknown, source: "user" | "project"): PriceEntry[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (source === "project") fail(file, "prices", "only the user settings file ($LI_HOME/settings.yaml) may set prices: they decide what a budget counts");
  const all = closed(file, "prices", value, Object.keys(value as object));
  return Object.entries(all).map(([match, v]) => {
    if (!/^[a-z]+\/\S+$/.test(match)) fail(file, `prices.${match}`, 'a price is keyed by provider/model, `*` matching any characters (for example "codex/gpt-5*")');
    const p = closed(file, `prices.${match}`, v, ["input", "cached_input", "output"]);
    for (const k of ["input", "output"]) if (p[k] === undefined) fail(file, `prices.${match}.${k}`, "required: USD per million tokens");
    const usd = (k: string, d: unknown) => number(file, `prices.${match}.${k}`, d, 0, 1e6, false);
    const input = usd("input", p.input);
    return { match, input, cached_input: p.cached_input === undefined ? input : usd("cached_input", p.cached_input), output: usd("output", p.output) };
  });
}
