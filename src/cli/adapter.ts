import { LiError } from "../errors.js";
import { writeErr, writeOut } from "./stdio.js";

/** What every command handler returns; handlers never print. */
export interface CommandResult<T = any> {
  data: T;
  /** The human view of `data`. */
  human?: (data: T) => string;
  /** A line for a person beside the result (that a job is still running, say): stderr, human mode only. */
  note?: string;
  /** The exit status of an ok result for a person at a shell (li wait has its own table); --machine always exits 0 on ok. */
  exitCode?: number;
}

export interface CliContext {
  machine: boolean;
  /** Where live output (a foreground run's stream) goes: stdout for humans, stderr in machine mode. */
  live: NodeJS.WriteStream;
}

export const EXIT = { ok: 0, failure: 1, invalid: 2 } as const;

const envelope = (body: Record<string, unknown>) => JSON.stringify({ contract: "li.result", version: 1, ...body });

/** The one shared adapter: runs a handler and renders its result or error, human or machine. */
export async function render(ctx: CliContext, handler: () => Promise<CommandResult> | CommandResult): Promise<void> {
  let result: CommandResult;
  try {
    result = await handler();
  } catch (err) {
    renderError(ctx, err);
    return;
  }
  if (ctx.machine) {
    writeOut(envelope({ ok: true, data: result.data }) + "\n");
  } else {
    const text = result.human ? result.human(result.data) : JSON.stringify(result.data, null, 2);
    if (text) writeOut(text.endsWith("\n") ? text : text + "\n");
    if (result.note) writeErr(result.note + "\n");
  }
  // In machine mode ok ⇔ exit 0 (the contract): the envelope already says what a human exit code would.
  process.exitCode = ctx.machine ? EXIT.ok : (result.exitCode ?? EXIT.ok);
}

export function renderError(ctx: { machine: boolean }, err: unknown): void {
  const e =
    err instanceof LiError
      ? err
      : new LiError("internal", err instanceof Error ? err.message : String(err), {
          ...(err instanceof Error && err.stack ? { stack: err.stack.split("\n").slice(0, 6).join("\n") } : {}),
        });
  if (ctx.machine) {
    writeOut(envelope({ ok: false, error: { kind: e.kind, message: e.message, detail: e.detail } }) + "\n");
  } else {
    writeErr(`li: ${e.message}\n`);
    const matches = e.detail.matches;
    if (Array.isArray(matches)) writeErr(`  matches: ${matches.join(", ")}\n`);
  }
  process.exitCode = e.kind === "invalid_input" ? EXIT.invalid : EXIT.failure;
}
