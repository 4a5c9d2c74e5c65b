import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB_LIST, v1 } from "../schemas.js";

@verb({
  id: "job.status",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["job", "status"],
  summary: "jobs' status",
  synonyms: v1("job_status"),
  result: JOB_LIST,
})
export class JobStatus implements Verb {}
