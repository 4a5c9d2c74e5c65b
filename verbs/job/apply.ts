import { verb, type Verb } from "../../src/mcp/verb.js";
import { CWD_IN_ROOTS, nullable } from "../schemas.js";

const strings = { type: "array", items: { type: "string" } };

/**
 * Delegates to `li job apply`: changes files in the checkout at `cwd` (within the client's roots;
 * the CLI checks) and records the apply, so it is a control verb; `check: true` is its dry run.
 */
@verb({
  id: "job.apply",
  effects: ["writes_files", "writes_records"],
  requiresFingerprint: false,
  cliPath: ["job", "apply"],
  withinRoots: CWD_IN_ROOTS,
  // A person's yes to files that run code (docs/sandbox.md): never in the schema, never rendered.
  terminalFlags: ["--accept-code-files"],
  summary: "apply a run's change",
  result: {
    type: "object",
    required: ["id", "repo", "host", "onto", "applied", "check", "three_way", "conflicts", "commit", "files", "apply_id"],
    properties: {
      id: { type: "string" },
      repo: { type: "string" },
      host: { type: "string" },
      onto: { type: "string" },
      applied: { type: "boolean" },
      check: { type: "boolean" },
      would_apply: { type: "boolean" },
      three_way: { type: "boolean" },
      conflicts: strings,
      commit: nullable("string"),
      files: strings,
      apply_id: nullable("string"),
    },
  },
})
export class JobApply implements Verb {}
