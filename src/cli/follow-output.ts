import { droppedNote } from "../lifecycle/console-read.js";
import type { Entity, Store } from "../lifecycle/store.js";
import type { CliContext } from "./adapter.js";
import { streamRun } from "./follow-run.js";
import { endLine, lineAware, say, startLine } from "./run-status.js";

/**
 * `li job output --follow`: the console streams to the live stream (stdout for a person, stderr
 * under --machine) until the job ends, then its final status goes to stderr. Following is only
 * watching: Ctrl-C stops it and leaves the job and its record alone (exit 130). A run not yet
 * started (queued, or placed and not claimed by its host) is waited for; another host's run is
 * read from the shared store, and bytes it no longer holds are said on stderr.
 */
export async function followOutput(ctx: CliContext, store: Store, e: Entity, tailBytes?: number): Promise<void> {
  const abort = new AbortController();
  const onInt = () => abort.abort();
  process.once("SIGINT", onInt);
  try {
    if (!ctx.machine && process.stderr.isTTY) say(startLine(e, "following; Ctrl-C stops following, the job goes on"));
    const live = lineAware(ctx.live);
    const end = await streamRun(store, e, live.stream, abort.signal, {
      tailBytes,
      onDropped: (bytes) => (live.endLine(), say(droppedNote(e.id, bytes))),
      onIncomplete: (run) => (live.endLine(), say(`li: the end of ${run.id}'s console did not reach the store (its host could not ship it); the whole console is in the run directory on host ${run.host}`)),
    });
    live.endLine();
    if (abort.signal.aborted) {
      say(`li: stopped following ${e.id} (${end.status}); li job output --follow ${e.id} picks it up again`);
      // Leave once what was streamed has reached stdout (a pipe drains asynchronously).
      process.stdout.write("", () => process.exit(130));
      await new Promise(() => {});
    }
    say(endLine(end));
  } finally {
    process.off("SIGINT", onInt);
  }
}
