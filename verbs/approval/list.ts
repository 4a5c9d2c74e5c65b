import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

/**
 * Delegates to `li approvals`: agents' permission requests, pending ones by default. Answering
 * one (li approve / li deny) is a person's command, fenced (src/mcp/fence.ts): an agent never
 * approves its own request, or anyone's.
 */
@verb({
  id: "approval.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["approvals"],
  summary: "permission requests",
  result: {
    type: "object",
    required: ["approvals"],
    properties: {
      approvals: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "run", "host", "tool", "input", "asked_at", "state"],
          properties: {
            id: { type: "string" },
            run: { type: "string" },
            host: { type: "string" },
            tool: { type: "string" },
            input: { type: "string" },
            asked_at: { type: "string" },
            state: { enum: ["pending", "allowed", "denied", "expired", "cancelled"] },
            answered_by: nullable("string"),
            answered_at: nullable("string"),
            message: nullable("string"),
            // What a --for-run answer covers (commands: the same commands; tool: --for-run-tool), and the earlier answer that answered this one.
            for_run_scope: { enum: ["commands", "tool", null] },
            answered_via: nullable("string"),
            // A rule's answer: which rule of which file, and for a shell command which rule each of its commands matched.
            rule_matches: {
              type: ["array", "null"],
              items: { type: "object", required: ["rule", "file"], properties: { rule: { type: "integer" }, file: { type: "string" }, command: { type: "string" }, more: { type: "integer" } } },
            },
          },
        },
      },
    },
  },
})
export class ApprovalList implements Verb {}
