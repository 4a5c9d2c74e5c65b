import { CALL_BUDGET_SECONDS, MAX_OPS } from "./limits.js";

/** The one advertised tool. Kept small on purpose: a test fails if tools/list passes 1,024 bytes. */
export const REQUEST_TOOL = {
  name: "request",
  title: "li: background agent jobs",
  description:
    `li: background AI-agent jobs. help=true lists verbs; help="<verb>" returns its schema and schema_fingerprint. ` +
    `Then ops=[{op, args}] (max ${MAX_OPS}, in order, ${CALL_BUDGET_SECONDS}s per call). Spawn ops carry schema_fingerprint (play.submit: playbook_fingerprint too).`,
  inputSchema: {
    type: "object",
    properties: {
      ops: {
        type: "array",
        maxItems: MAX_OPS,
        items: {
          type: "object",
          properties: { op: { type: "string" }, args: { type: "object" }, schema_fingerprint: { type: "string" }, playbook_fingerprint: { type: "string" } },
          required: ["op"],
        },
      },
      help: {
        anyOf: [{ type: "boolean" }, { type: "string" }, { type: "object", properties: { verb: { type: "string" }, playbook: { type: "string" } }, required: ["verb"] }],
      },
    },
  },
  // The truth for a tool that can spawn agents and kill runs: a client must not treat it as a read.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // The only tool: load it up front rather than behind a tool search.
  _meta: { "anthropic/alwaysLoad": true },
} as const;

/** MCP `instructions`: how to use the one tool, in three lines. */
export const INSTRUCTIONS = [
  `One tool, request. help=true lists the verbs with signatures; help="<verb>" gives a verb's schema and schema_fingerprint.`,
  `Run verbs as ops=[{"op": "<verb>", "args": {...}, "schema_fingerprint": "..."}]; spawn verbs need the fingerprint, reads do not.`,
  `A rejected op carries the schema and the exact remedy; then batch [job.wait, job.output] to collect a result within one ${CALL_BUDGET_SECONDS}s call.`,
].join("\n");
