import type { Check } from "./doctor-checks.js";

/*
 * li doctor's word on the exec-only copies of li's programs (docs/sandbox.md, "The cache"): where
 * they are, how much disk they take, and how many are of an earlier version. Information only: li
 * removes a stale copy itself at a run's start, once no run has used it for an hour.
 */
export async function execOnlyChecks(): Promise<Check[]> {
  const [{ execOnlyDir }, { cacheSummary }] = await Promise.all([import("../runtime/sandbox/exec-only.js"), import("../runtime/sandbox/exec-only-prune.js")]);
  let c;
  try {
    c = cacheSummary(execOnlyDir());
  } catch {
    // No li home to find it in: the li_home check says why.
    return [];
  }
  if (!c.copies) return [];
  return [{ check: "sandbox_exec_only", ok: true, info: true, detail: c.line, fix: null }];
}
