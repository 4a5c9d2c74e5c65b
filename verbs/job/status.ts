import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB_LIST, V1_RETIRED_ON } from "../schemas.js";

@verb({
  id: "job.status",
  category: "read",
  requiresFingerprint: false,
  cliPath: ["job", "status"],
  summary: "status of jobs by id or prefix",
  synonyms: [{ name: "job_status", retiresOn: V1_RETIRED_ON }],
  result: JOB_LIST,
})
export class JobStatus implements Verb {}
