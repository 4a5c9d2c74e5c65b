import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

/** Delegates to `li job diff`: an isolated run's change from the store, one page of its patch. */
@verb({
  id: "job.diff",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["job", "diff"],
  summary: "an isolated run's change",
  // One run's change (captured, change, and a page of patch unless stat), or a fan-out's runs.
  result: {
    type: "object",
    required: ["id", "kind", "status"],
    properties: {
      id: { type: "string" },
      kind: { type: "string" },
      status: { type: "string" },
      captured: { type: "boolean" },
      change: nullable("object"),
      // Where a change not captured yet waits, and why (owed.ts pendingChange).
      change_pending: { type: "object", required: ["reason", "worktree", "message"] },
      patch: { type: "string" },
      bytes: { type: "integer" },
      total_bytes: { type: "integer" },
      offset: { type: "integer" },
      end: { type: "integer" },
      truncated: { type: "boolean" },
      runs: { type: "array" },
    },
  },
})
export class JobDiff implements Verb {}
