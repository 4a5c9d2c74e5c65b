// A run's console.log: read once when the run is over, else its tail and then the stream.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, enc, get, type ConsoleSlice } from "./api";
import { reportError } from "./errors";
import { withKey } from "./key";
import { bytes } from "./ui";

const byteLength = (s: string) => new TextEncoder().encode(s).length;
/** The most console text the page keeps: a run that floods its console keeps only its tail here. */
const KEEP_CHARS = 2 * 1024 * 1024;
const keepTail = (t: string) => (t.length > KEEP_CHARS ? t.slice(-KEEP_CHARS) : t);

export function Console({ runId, terminal }: { runId: string; terminal: boolean }) {
  const [text, setText] = useState("");
  const [note, setNote] = useState<string | null>(null);
  const [state, setState] = useState<"loading" | "streaming" | "done">("loading");
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  // Whether this view started while the run was live: it then streams until the end event.
  const startedLive = useRef(!terminal);

  useEffect(() => {
    let closed = false;
    let es: EventSource | null = null;
    let retry: any = 0;
    let end = 0;
    const key = `console:${runId}`;

    const stream = () => {
      if (closed) return;
      es = new EventSource(withKey(`/api/runs/${enc(runId)}/console/stream?offset=${end}`));
      setState("streaming");
      es.addEventListener("chunk", (ev) => {
        const c = JSON.parse((ev as MessageEvent).data) as { offset: number; text: string };
        const len = byteLength(c.text);
        if (typeof c.offset === "number" && c.offset + len <= end) return; // already shown
        end = (typeof c.offset === "number" ? c.offset : end) + len;
        setText((t) => keepTail(t + c.text));
      });
      es.addEventListener("skip", (ev) => {
        const k = JSON.parse((ev as MessageEvent).data) as { from: number; to: number };
        end = k.to;
        setText((t) => keepTail(`${t}\n[… ${bytes(k.to - k.from)} skipped: li job output --offset ${k.from} pages through them …]\n`));
      });
      es.addEventListener("end", () => {
        es?.close();
        es = null;
        setState("done");
      });
      es.addEventListener("failure", (ev) => {
        es?.close();
        es = null;
        let msg = "the console stream failed";
        try { msg = JSON.parse((ev as MessageEvent).data).message ?? msg; } catch { /* keep the default */ }
        reportError(key, msg);
        setState("done");
      });
      // Reopen from where we are rather than letting EventSource replay from the old offset.
      es.addEventListener("error", () => {
        es?.close();
        es = null;
        if (!closed) retry = setTimeout(stream, 1000);
      });
    };

    (async () => {
      try {
        const c = await get<ConsoleSlice>(`/api/runs/${enc(runId)}/console`);
        if (closed) return;
        reportError(key, null);
        setText(c.text);
        end = c.end;
        setNote(c.truncated ? `showing the last ${bytes(c.end - c.offset)} of ${bytes(c.total)}` : null);
        if (startedLive.current) stream();
        else setState("done");
      } catch (e) {
        if (closed) return;
        // A run with no console yet (still queued): stream from the start.
        if (startedLive.current && e instanceof ApiError && e.status === 404) { end = 0; stream(); return; }
        reportError(key, e instanceof Error ? e.message : String(e));
        setState("done");
      }
    })();

    return () => {
      closed = true;
      clearTimeout(retry);
      es?.close();
      reportError(key, null);
    };
  }, [runId]);

  useLayoutEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);

  const onScroll = () => {
    const el = pre.current;
    if (el) stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
  };

  return (
    <section class="card" id="console-section">
      <h3>
        Console
        <span class={`muted small ${state}`}>{state === "streaming" ? " live" : state === "loading" ? " loading…" : ""}</span>
      </h3>
      {note && <p class="muted small" id="console-note">{note}</p>}
      <pre id="console" class="console" ref={pre} onScroll={onScroll}>{text}</pre>
    </section>
  );
}
