import { markIn } from "../../bench-marks.js";

/*
 * Where a sandboxed run's start-up time goes, for `npm run bench:sandbox` only
 * (LI_BENCH_SANDBOX_MARKS; see bench-marks.ts).
 */
export function mark(phase: string, at?: number): void {
  markIn("LI_BENCH_SANDBOX_MARKS", phase, at);
}
