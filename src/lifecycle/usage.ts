import type { Entity, TransitionPatch } from "./records.js";

/*
 * What a provider reported a run cost, normalised across providers. input_tokens counts every
 * input token, cached ones included (cached_tokens is that part): the providers disagree on
 * whether their own input count includes the cache, and a total that means one thing is what
 * li stats can add up. cost_usd is null unless the provider itself reports a cost.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost_usd: number | null;
}

/** The structured end a provider adapter reports, recorded on the run with its status. */
export interface RunResult {
  result_text: string | null;
  usage: Usage | null;
  /**
   * Why the run's own usage is not known though the provider reported some (it reported a resumed
   * session's running totals, and the totals before this run are not known): recorded instead of
   * a wrong figure, and counted apart by li stats.
   */
  usage_unknown?: string | null;
  provider_session_id: string | null;
  num_turns: number | null;
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);

export function usage(input: unknown, output: unknown, cached: unknown, cost: unknown = null): Usage {
  return {
    input_tokens: count(input),
    output_tokens: count(output),
    cached_tokens: count(cached),
    cost_usd: typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null,
  };
}

/** A dollar or token figure to a millionth: sums of doubles shown without their rounding noise. */
export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Two reports of one run (several turns) as one. */
export function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a || !b) return a ?? b;
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    cost_usd: a.cost_usd === null && b.cost_usd === null ? null : (a.cost_usd ?? 0) + (b.cost_usd ?? 0),
  };
}

/** The recorded usage of `e`, or null (none reported, not a usage, or unknown: see usageUnknown). */
export function usageOf(e: Pick<Entity, "usage">): Usage | null {
  const u = usageJson(e);
  return u && typeof u.unknown !== "string" ? usage(u.input_tokens, u.output_tokens, u.cached_tokens, u.cost_usd) : null;
}

/** Why `e`'s usage is unknown ({"unknown": reason} in its usage column), or null. */
export function usageUnknown(e: Pick<Entity, "usage">): string | null {
  const u = usageJson(e);
  return typeof u?.unknown === "string" ? u.unknown : null;
}

function usageJson(e: Pick<Entity, "usage">): Record<string, any> | null {
  if (!e.usage) return null;
  try {
    const u = JSON.parse(e.usage);
    return u && typeof u === "object" ? u : null;
  } catch {
    return null;
  }
}

/** The usage of several runs together (a session's steps), or null when none reported any. */
export function totalUsage(entities: Pick<Entity, "usage">[]): Usage | null {
  return entities.reduce<Usage | null>((sum, e) => addUsage(sum, usageOf(e)), null);
}

/** The columns a terminal transition writes for `r`. */
export function resultPatch(r: RunResult | null): TransitionPatch {
  if (!r) return {};
  // Only what was reported: a null would erase a session id recorded while the run streamed.
  const patch: TransitionPatch = {};
  if (r.result_text !== null) patch.result_text = r.result_text;
  if (r.usage) patch.usage = JSON.stringify(r.usage);
  else if (r.usage_unknown) patch.usage = JSON.stringify({ unknown: r.usage_unknown });
  if (r.provider_session_id !== null) patch.provider_session_id = r.provider_session_id;
  if (r.num_turns !== null) patch.num_turns = r.num_turns;
  return patch;
}
