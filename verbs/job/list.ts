import { verb, type Verb } from "../../src/mcp/verb.js";
import { JOB_LIST, v1 } from "../schemas.js";

@verb({
  id: "job.list",
  effects: ["reaps"],
  requiresFingerprint: false,
  cliPath: ["job", "list"],
  summary: "recent jobs, newest first",
  synonyms: v1("jobs_list"),
  result: JOB_LIST,
})
export class JobList implements Verb {}
