/** The human view of li job apply's result. */
import type { ApplyResult } from "../runtime/changes/apply-run.js";

const short = (sha: string) => sha.slice(0, 12);

export function applyLines(r: ApplyResult): string {
  const of = r.change_of ? ` (the change of ${r.change_of})` : "";
  const where = `${r.worktree} onto ${short(r.onto)}`;
  const lines: string[] = [];
  for (const x of r.reconciled) lines.push(`an earlier apply (${x.apply_id}) was killed half way: settled as ${x.to}, from what the checkout holds`);
  const files = `${r.files.length} file${r.files.length === 1 ? "" : "s"}`;
  if (r.check) {
    if (!r.would_apply) lines.push(`${r.id}${of} would conflict in ${where}: ${r.conflicts.join(", ")}${r.three_way ? "" : " (--3way would merge and leave markers, where it can)"}`);
    else if (r.conflicts.length) lines.push(`${r.id}${of} would apply to ${where} with --3way, leaving conflict markers in: ${r.conflicts.join(", ")}`);
    else lines.push(`${r.id}${of} would apply cleanly to ${where} (${files})`);
    return lines.join("\n");
  }
  if (r.conflicts.length) lines.push(`${r.id}${of} applied to ${where} with conflicts to resolve in: ${r.conflicts.join(", ")}`);
  else lines.push(`${r.id}${of} applied to ${where} (${files}): ${r.files.join(", ")}`);
  if (r.commit) lines.push(`committed as ${short(r.commit)}`);
  if (r.commit_skipped) lines.push(`not committed: ${r.commit_skipped}`);
  return lines.join("\n");
}
