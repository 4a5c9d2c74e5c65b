import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

/** Delegates to `li budget list`: every budget's figures. Setting or deleting one is a person's command, never a verb. */
@verb({
  id: "budget.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["budget", "list"],
  summary: "budgets and their spend",
  result: {
    type: "object",
    required: ["budgets", "count"],
    properties: {
      count: { type: "integer" },
      budgets: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "scope", "unit", "limit", "period", "timezone", "on_exceed", "spent", "reserved", "left", "resets_at"],
          properties: {
            name: { type: "string" },
            scope: { type: "string" },
            unit: { enum: ["usd", "tokens"] },
            limit: { type: "number" },
            period: { type: "string" },
            timezone: { type: "string" },
            on_exceed: { enum: ["refuse", "hold"] },
            spent: { type: "number" },
            reserved: { type: "number" },
            left: { type: "number" },
            resets_at: nullable("string"),
            // Of the spent, what runs li's model gateway did not meter account for.
            unmetered: { type: "object", required: ["runs", "spent"], properties: { runs: { type: "integer" }, spent: { type: "number" } } },
          },
        },
      },
    },
  },
})
export class BudgetList implements Verb {}
