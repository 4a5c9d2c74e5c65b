import fs from "node:fs";

/*
 * Where a sandboxed run's start-up time goes, for `npm run bench:sandbox` only: with
 * LI_BENCH_SANDBOX_MARKS naming a file (the bench sets it; li itself never does), each mark appends
 * `<phase> <epoch ms>` there. Without it, a mark is one environment read.
 */
export function mark(phase: string, at = performance.timeOrigin + performance.now()): void {
  const file = process.env.LI_BENCH_SANDBOX_MARKS;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${phase} ${at.toFixed(2)}\n`);
  } catch {}
}
