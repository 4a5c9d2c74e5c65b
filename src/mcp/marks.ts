import { markIn } from "../bench-marks.js";

/*
 * Where an op's time goes in `li mcp` itself, for `npm run bench` only (LI_BENCH_MCP_MARKS; see
 * bench-marks.ts): its start, li spawned, li exited, its result decoded, its audit line written.
 */
export function opMark(phase: "op-start" | "li-spawn" | "li-exit" | "op-decoded" | "op-audited"): void {
  markIn("LI_BENCH_MCP_MARKS", phase);
}
