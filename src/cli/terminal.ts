import { isTerminal } from "./stdio.js";

/** What the human renderer may assume about where its text goes. */

type Out = { isTTY?: boolean; columns?: number };

/**
 * The width to fit tables to: the terminal's, or COLUMNS when set (a person forcing a width on a
 * pipe); none otherwise, so a file or pipe gets every character.
 */
export function outputWidth(stream?: Out): number | undefined {
  // Asked of stdout, its stream is made only when it is a terminal that has a width.
  if (stream ? stream.isTTY && stream.columns : isTerminal(1) && process.stdout.columns) return (stream ?? process.stdout).columns;
  const env = Number(process.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : undefined;
}

/** Colour only for a person at a terminal, never when NO_COLOR is set (no-color.org) or TERM=dumb. */
export function colourOn(stream?: Out): boolean {
  return (stream ? !!stream.isTTY : isTerminal(1)) && !process.env.NO_COLOR && process.env.TERM !== "dumb";
}

const SGR = { red: 31, green: 32, yellow: 33, blue: 34, dim: 2, bold: 1 } as const;
export type Tint = keyof typeof SGR;

export const tint = (text: string, t: Tint | undefined, on: boolean) => (on && t ? `\x1b[${SGR[t]}m${text}\x1b[0m` : text);

/** A status's colour: green done well, red failed, yellow still going, dim cancelled. */
export function statusTint(status: string): Tint | undefined {
  switch (status) {
    case "completed":
      return "green";
    case "failed":
    case "timed_out":
    case "lost":
      return "red";
    case "running":
      return "yellow";
    case "preparing":
    case "queued":
      return "blue";
    case "cancelled":
      return "dim";
    default:
      return undefined;
  }
}
