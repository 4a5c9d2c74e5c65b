import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable, v1 } from "../schemas.js";

@verb({
  id: "job.output",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["job", "output"],
  summary: "a job's console output",
  terminalFlags: ["--follow"],
  synonyms: v1("job_output"),
  result: {
    type: "object",
    required: ["id", "host", "output", "bytes", "total_bytes", "truncated"],
    properties: { id: { type: "string" }, host: nullable("string"), output: { type: "string" }, bytes: { type: "integer" }, total_bytes: { type: "integer" }, truncated: { type: "boolean" } },
  },
})
export class JobOutput implements Verb {}
