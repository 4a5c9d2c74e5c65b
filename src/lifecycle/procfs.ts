import fs from "node:fs";

export interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  /** Start time in clock ticks since boot: with the pid, it names one process for good. */
  starttime: number;
}

/** /proc/<pid>/stat, or null when the process does not exist. A zombie counts as gone. */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // comm may hold spaces and parentheses: fields resume after the last ')'.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const stat = { pid, state: rest[0], pgrp: Number(rest[2]), starttime: Number(rest[19]) };
  return stat.state === "Z" || stat.state === "X" ? null : stat;
}

export function selfStat(): ProcStat {
  const stat = readProcStat(process.pid);
  if (!stat) throw new Error("cannot read /proc/self/stat");
  return stat;
}

/** True when the pid names the very process that was recorded. */
export function isSameProcess(pid: number, starttime: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && stat.starttime === starttime;
}
