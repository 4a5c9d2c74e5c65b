import path from "node:path";
import { invalid } from "../../errors.js";
import { liHome } from "../../lifecycle/paths.js";
import { CATEGORIES, mergePolicies, parsePolicySpec, specOf, type PolicySpec } from "../../config/policy.js";
import { loadSettings } from "../../config/settings.js";

/** The file `li mcp` appends every op to, and `li mcp audit` reads. */
export const auditFile = () => path.join(liHome(), "mcp-audit.jsonl");

/** The server's policy: the flags and settings' mcp.policy, merged most restrictive; settings warnings go to stderr. */
export function serverOptions(opts: { readOnly?: boolean; allow?: string; allowVerb?: string[]; denyVerb?: string[] }) {
  const flags: PolicySpec = {};
  if (opts.readOnly) flags.read_only = true;
  if (opts.allow !== undefined) {
    const cats = opts.allow.split(",").map((c) => c.trim()).filter(Boolean);
    const bad = cats.filter((c) => !(CATEGORIES as readonly string[]).includes(c));
    if (bad.length) throw invalid(`--allow takes ${CATEGORIES.join(", ")} (comma-separated); got ${bad.join(", ")}`, { field: "allow" });
    flags.allow = cats as PolicySpec["allow"];
  }
  if (opts.allowVerb) flags.allow_verbs = opts.allowVerb;
  if (opts.denyVerb) flags.deny_verbs = opts.denyVerb;
  const checked = parsePolicySpec("li mcp flags", flags);
  const settings = loadSettings();
  for (const w of settings.warnings) process.stderr.write(w + "\n");
  const fromSettings = settings.mcp_policy;
  const policy = mergePolicies([
    { source: "flags", spec: checked },
    { source: fromSettings.sources.join(", "), spec: fromSettings.sources.length ? specOf(fromSettings) : {} },
  ]);
  return { policy, auditFile: auditFile() };
}
