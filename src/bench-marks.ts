import fs from "node:fs";

/*
 * Where a process's time goes, for the benchmarks only: with the variable `name` naming a file
 * (a bench sets it; li itself never does), each mark appends `<phase> <epoch ms>`. Without it, a
 * mark is one environment read.
 */
export function markIn(name: string, phase: string, at = performance.timeOrigin + performance.now()): void {
  const file = process.env[name];
  if (!file) return;
  try {
    fs.appendFileSync(file, `${phase} ${at.toFixed(2)}\n`);
  } catch {}
}
