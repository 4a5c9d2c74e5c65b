import { CALL_BUDGET_SECONDS, MAX_OPS } from "./limits.js";

/** The one advertised tool. Kept small on purpose: a test fails if tools/list passes 1,024 bytes. */
export const REQUEST_TOOL = {
  name: "request",
  description:
    `li: background AI-agent jobs. Call help=true first for the verb catalog; help="<verb>" returns its schema and schema_fingerprint. ` +
    `Then send ops=[{op, args}] (max ${MAX_OPS}, run in order). Spawn verbs also need "schema_fingerprint" on the op (play.submit: "playbook_fingerprint" too). One call has a ${CALL_BUDGET_SECONDS}s budget.`,
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
      help: { description: 'true, a verb id, or {"verb","playbook"}' },
    },
  },
} as const;
