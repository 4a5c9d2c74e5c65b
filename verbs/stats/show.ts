import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";


@verb({
  id: "stats",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["stats"],
  summary: "counts, durations, usage",
  result: {
    type: "object",
    required: ["since", "now", "total", "kinds"],
    properties: {
      since: { type: ["string", "null"] },
      total: { type: "integer" },
      kinds: {
        type: "array",
        items: {
          type: "object",
          required: ["kind", "total", "by_status", "by_outcome", "duration_seconds"],
          properties: {
            duration_seconds: {
              type: "object",
              required: ["count", "p50", "p90", "max"],
              properties: { count: { type: "integer" }, p50: nullable("number"), p90: nullable("number"), max: nullable("number") },
            },
          },
        },
      },
      by_budget: {
        type: "array",
        items: {
          type: "object",
          required: ["budget", "unit", "limit", "period_start", "runs", "spent", "by_outcome"],
          properties: {
            budget: { type: "string" },
            unit: { enum: ["usd", "tokens"] },
            limit: { type: "number" },
            period_start: nullable("string"),
            runs: { type: "integer" },
            spent: { type: "number" },
            by_outcome: { type: "object", additionalProperties: { type: "object", required: ["runs", "spent"] } },
            unmetered: { type: "object", required: ["runs", "spent"], properties: { runs: { type: "integer" }, spent: { type: "number" } } },
          },
        },
      },
    },
  },
})
export class Stats implements Verb {}
