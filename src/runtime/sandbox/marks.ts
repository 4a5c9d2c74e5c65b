import fs from "node:fs";

/*
 * Where a sandboxed run's start-up time goes, for `npm run bench:sandbox` only: with
 * LI_BENCH_SANDBOX_MARKS naming a file (li itself never sets it), the worker appends one
 * `<phase> <epoch ms>` line per phase it passes. Without it, a mark is one property read.
 */

export function mark(phase: string, at = performance.timeOrigin + performance.now()): void {
  const file = process.env.LI_BENCH_SANDBOX_MARKS;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${phase} ${at.toFixed(1)}\n`);
  } catch {}
}
