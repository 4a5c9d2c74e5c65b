import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

@verb({
  id: "monitor",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["monitor"],
  summary: "active jobs, failures, outbox",
  terminalFlags: ["--watch", "--interval"],
  result: {
    type: "object",
    required: ["now", "counts", "active", "active_total", "recent_failures", "outbox", "schedules"],
    properties: {
      now: { type: "string" },
      counts: { type: "object", additionalProperties: { type: "integer" } },
      active: { type: "array", items: { type: "object", required: ["id", "kind", "host", "status", "age_seconds", "model", "label"], properties: { host: nullable("string"), age_seconds: { type: "number" } } } },
      active_total: { type: "integer" },
      recent_failures: { type: "array", items: { type: "object", required: ["id", "kind", "status", "reason_code"] } },
      outbox: { type: "object", additionalProperties: { type: "integer" } },
      schedules: { type: "object", required: ["total", "enabled", "due", "next_due_at"], properties: { due: { type: "array" } } },
    },
  },
})
export class Monitor implements Verb {}
