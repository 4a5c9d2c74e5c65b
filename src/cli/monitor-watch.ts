import { invalid } from "../errors.js";
import type { Store } from "../lifecycle/store.js";
import type { CliContext } from "./adapter.js";
import { localTime, zoneNote } from "./human-time.js";
import { type MonitorData, monitorView } from "./monitor-view.js";
import { withStore } from "./views.js";

/*
 * `li monitor --watch`: a live view for a person. On a terminal it redraws in place on the
 * alternate screen until Ctrl-C, then gives the screen back as it was; off a terminal it
 * appends a snapshot every interval (a log a person can read later). Watching only reads:
 * it reaps what li monitor reaps and changes nothing else.
 */

const ALT_ON = "\x1b[?1049h\x1b[?25l";
const ALT_OFF = "\x1b[?25h\x1b[?1049l";
/** Lines the frame keeps for itself around the active list (header, counts, failures). */
const CHROME_ROWS = 16;

export async function watchMonitor(ctx: CliContext, snapshot: (store: Store) => Promise<MonitorData>, intervalSeconds: number): Promise<void> {
  if (ctx.machine) throw invalid("--watch is a live view for a person; under --machine run li monitor once per refresh", { field: "watch" });
  const out = process.stdout;
  const tty = !!out.isTTY;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((r) => (stop = r));
  let wake: () => void = () => {};
  const onWinch = () => wake();
  const restore = () => {
    if (tty) out.write(ALT_OFF);
  };
  process.once("SIGINT", () => stop());
  process.once("SIGTERM", () => stop());
  process.on("SIGWINCH", onWinch);
  process.once("exit", restore);
  if (tty) out.write(ALT_ON);
  let done = false;
  void stopped.then(() => {
    done = true;
    wake();
  });
  try {
    await withStore(async (store) => {
      while (!done) {
        const d = await snapshot(store);
        const rows = tty ? Math.max(3, (out.rows || 24) - CHROME_ROWS - d.recent_failures.length) : undefined;
        const body = (await monitorView(store, d, { rows }))();
        const head = tty ? `li monitor: every ${intervalSeconds}s; Ctrl-C to quit` : `li monitor at ${localTime(d.now)} ${zoneNote()}`;
        if (tty) out.write(frame([head, "", ...body.split("\n")], out.columns || 80, out.rows || 24));
        else out.write(`${head}\n${body}\n\n`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, intervalSeconds * 1000);
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
    });
  } finally {
    process.off("SIGWINCH", onWinch);
    restore();
    process.off("exit", restore);
  }
  process.exitCode = 0;
}

/** One screenful drawn over the last from the top left: each line cut to the width and cleared to its end. */
function frame(lines: string[], columns: number, rows: number): string {
  const cut = lines.slice(0, rows).map((l) => cutVisible(l, columns - 1) + "\x1b[K");
  return `\x1b[H${cut.join("\n")}\x1b[J`;
}

/** `line` cut to `width` visible characters, colour codes kept whole and not counted. */
function cutVisible(line: string, width: number): string {
  let visible = 0;
  let out = "";
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith("\x1b[")) out += part;
    else {
      const room = width - visible;
      out += part.slice(0, Math.max(0, room));
      visible += Math.min(part.length, Math.max(0, room));
    }
  }
  return out + (line.includes("\x1b[") ? "\x1b[0m" : "");
}
