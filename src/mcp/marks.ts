import fs from "node:fs";

/*
 * Where an op's time goes in `li mcp` itself, for `npm run bench` only: with LI_BENCH_MCP_MARKS
 * naming a file (the bench sets it; li itself never does), each mark appends `<phase> <epoch ms>`
 * there: its start, li spawned, li exited, its result decoded, its audit line written. Without it,
 * a mark is one environment read. (The sandbox's marks, src/runtime/sandbox/marks.ts, write alike.)
 */
export function opMark(phase: "op-start" | "li-spawn" | "li-exit" | "op-decoded" | "op-audited"): void {
  const file = process.env.LI_BENCH_MCP_MARKS;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${phase} ${(performance.timeOrigin + performance.now()).toFixed(2)}\n`);
  } catch {}
}
