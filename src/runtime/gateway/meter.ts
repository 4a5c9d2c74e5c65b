import { priceOf, usdOf } from "../../lifecycle/budgets/prices.js";
import type { PriceEntry } from "../../lifecycle/budgets/prices.js";
import { addUsage, round6, usage, type Usage } from "../../lifecycle/usage.js";
import type { GatewayCall } from "./server.js";

/*
 * A run's model calls as its gateway saw them, each priced from li's table (the call's own model
 * first, so claude's small-model side calls cost what they cost, else the run's), and their sum:
 * the run's usage when it is metered.
 */

export interface PricedCall extends GatewayCall {
  cost_usd: number | null;
}

export class GatewayMeter {
  readonly calls: PricedCall[] = [];
  private sum: Usage | null = null;

  constructor(
    private readonly provider: string,
    private readonly runModel: string,
    private readonly prices: () => readonly PriceEntry[],
  ) {}

  private costOf(call: GatewayCall): number | null {
    if (!call.usage) return null;
    const p = (call.model ? priceOf(`${this.provider}/${call.model}`, this.prices()) : null) ?? priceOf(this.runModel, this.prices());
    return p ? round6(usdOf(call.usage, p)) : null;
  }

  add(call: GatewayCall): PricedCall {
    const priced = { ...call, cost_usd: this.costOf(call) };
    this.calls.push(priced);
    if (call.usage) this.sum = addUsage(this.sum ?? usage(0, 0, 0, 0), { ...call.usage, cost_usd: priced.cost_usd ?? 0 });
    return priced;
  }

  /** The run's usage from its calls (zero once it is metered and made none); cost to a millionth. */
  total(): Usage {
    const s = this.sum ?? usage(0, 0, 0, 0);
    return { ...s, cost_usd: s.cost_usd === null ? null : round6(s.cost_usd) };
  }
}

/**
 * Whether a stream's own figures report less than the calls it covers. Each stream leaves some
 * calls out (claude's small-model side calls, gemini's routing calls): only calls of the run's own
 * model are held against it.
 */
export function underReported(stream: Usage | null, calls: PricedCall[], runModel: string): boolean {
  const own = runModel.slice(runModel.indexOf("/") + 1);
  const covered = calls.filter((c) => c.usage && (c.model === null || c.model.startsWith(own) || own.startsWith(c.model)));
  const input = covered.reduce((t, c) => t + c.usage!.input_tokens, 0);
  const output = covered.reduce((t, c) => t + c.usage!.output_tokens, 0);
  if (!covered.length) return false;
  return (stream?.input_tokens ?? 0) < input || (stream?.output_tokens ?? 0) < output;
}
