import { verb, type Verb } from "../../src/mcp/verb.js";

/** Re-sends a delivery to its already-configured handler; callers never supply a command. */
@verb({
  id: "dispatch.retry",
  effects: ["runs_handlers", "writes_records"],
  requiresFingerprint: false,
  cliPath: ["dispatch", "retry"],
  summary: "resend a failed delivery",
  result: { type: "object", required: ["delivery"], properties: { delivery: { type: "object", required: ["id", "status"] }, drainer_started: { type: "boolean" } } },
})
export class DispatchRetry implements Verb {}
