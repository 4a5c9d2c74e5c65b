import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB_LIST, V1_RETIRED_ON } from "../schemas.js";

@verb({
  id: "job.list",
  category: "read",
  requiresFingerprint: false,
  cliPath: ["job", "list"],
  summary: "recent jobs, newest first",
  synonyms: [{ name: "jobs_list", retiresOn: V1_RETIRED_ON }],
  result: JOB_LIST,
})
export class JobList implements Verb {}
