// The start-up regression guards (issue 48): ratios measured in the same run, each with its bound.
// A read doing the ADR's work cannot go under about 1.11x node -e 0 (the floor), so these bounds
// leave room for a loaded machine's noise between runs and still catch a real regression.
import os from "node:os";

export const GUARDS = {
  read: { what: "direct read (li --machine job list)", of: "node -e 0", max: 1.3 },
  op: { what: "MCP op round trip (job.list)", of: "node -e 0", max: 1.4 },
  connect: { what: "MCP connect (spawn + initialize)", of: "node -e 0", max: 2.2 },
  pg: { what: "PostgreSQL read (li --machine job list)", of: "the SQLite read", max: 1.4 },
};

/** "pass" or "FAIL" for `ratio` against guard `key`. */
export const verdict = (key, ratio) => (ratio <= GUARDS[key].max ? "pass" : "FAIL");

/** One guard's line: its figure, its bound and its verdict. */
export function guardLine(key, ratio) {
  const g = GUARDS[key];
  return `${g.what.padEnd(42)} ${ratio.toFixed(2).padStart(5)}x ${g.of.padEnd(16)} (guard <= ${g.max}x)  ${verdict(key, ratio)}`;
}

/** The load averages, for a figure's context: a shared machine's contention moves every ratio. */
export const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");
