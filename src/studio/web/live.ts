// The app's one change stream (/api/stream) and the hook a view reads its data through:
// fetched on mount, then again ~150 ms after each change (and on a timer for a view that asks),
// never two at once for one view.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api";
import { reportError } from "./errors";
import { withKey } from "./key";

export type ConnState = "connecting" | "live" | "reconnecting";

type Listener = () => void;
const changeListeners = new Set<Listener>();
const connListeners = new Set<(s: ConnState) => void>();
let conn: ConnState = "connecting";
let source: EventSource | null = null;

function setConn(s: ConnState) {
  if (s === conn) return;
  conn = s;
  for (const l of connListeners) l(s);
}

function fireChange() {
  for (const l of changeListeners) l();
}

/** Opens the stream once for the whole app; EventSource reconnects by itself. */
export function startStream(): void {
  if (source) return;
  const es = new EventSource(withKey("/api/stream"));
  source = es;
  es.addEventListener("open", () => {
    const wasDown = conn === "reconnecting";
    setConn("live");
    // Changes made while the stream was down were not seen: read again.
    if (wasDown) fireChange();
  });
  es.addEventListener("error", () => {
    setConn("reconnecting");
    // An answer that is not a stream (a 401, a 503) closes an EventSource for good: open anew.
    if (es.readyState === EventSource.CLOSED) {
      source = null;
      setTimeout(startStream, 3000);
    }
  });
  es.addEventListener("change", () => fireChange());
}

export function onChange(l: Listener): () => void {
  changeListeners.add(l);
  return () => changeListeners.delete(l);
}

export function useConn(): ConnState {
  const [s, setS] = useState(conn);
  useEffect(() => {
    connListeners.add(setS);
    setS(conn);
    return () => { connListeners.delete(setS); };
  }, []);
  return s;
}

export interface Live<T> { data: T | undefined; error: ApiError | null; loading: boolean; reload: () => void }

let keySeq = 0;

export interface LiveOptions<T> {
  /** false: read on mount and on `deps` only, not after change events. */
  live?: boolean;
  /**
   * Also read every `pollMs` while the tab is visible (and once more when it becomes visible):
   * for what changes without a change event. Spend (budget_charges, run_spend) writes no audit
   * row, and on PostgreSQL the change stamp is the newest audit row's id (store-source.ts).
   */
  pollMs?: number;
  /** Whether to poll now, asked with the latest data before each poll (default: always). */
  pollWhile?: (data: T | undefined) => boolean;
}

/**
 * Reads `fetcher` now, whenever `deps` change, and after each change event (debounced).
 * A change that arrives while a read is in flight schedules one more read after it.
 */
export function useLive<T>(fetcher: () => Promise<T>, deps: unknown[], opts: LiveOptions<T> = {}): Live<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const st = useRef({ gen: 0, active: false, inFlight: false, again: false, failed: false, timer: 0 as any, fetcher, key: "", data: undefined as T | undefined, pollWhile: opts.pollWhile });
  if (!st.current.key) st.current.key = `live${++keySeq}`;
  st.current.fetcher = fetcher;
  st.current.pollWhile = opts.pollWhile;

  const run = () => {
    const s = st.current;
    if (!s.active) return;
    if (s.inFlight) { s.again = true; return; }
    s.inFlight = true;
    const gen = s.gen;
    s.fetcher().then(
      (d) => {
        if (gen !== s.gen) return;
        s.data = d;
        s.failed = false;
        setData(d);
        setError(null);
        reportError(s.key, null);
      },
      (e) => {
        if (gen !== s.gen) return;
        const err = e instanceof ApiError ? e : new ApiError(String(e?.message ?? e), 0, null);
        s.failed = true;
        setError(err);
        reportError(s.key, err.message);
      },
    ).finally(() => {
      s.inFlight = false;
      if (gen === s.gen) setLoading(false);
      if (s.active && (s.again || gen !== s.gen)) { s.again = false; run(); }
    });
  };

  useEffect(() => {
    const s = st.current;
    s.gen++;
    s.active = true;
    s.again = false;
    s.data = undefined;
    setData(undefined);
    setError(null);
    setLoading(true);
    // A read of the old deps still in flight runs this one when it settles.
    if (s.inFlight) s.again = true; else run();
    const off = opts.live === false ? () => {} : onChange(() => {
      clearTimeout(s.timer);
      s.timer = setTimeout(run, 150);
    });
    // A read that failed is read again on the next beat, even where polling has stopped (an ended
    // run's page): a passing error must not leave the page empty until it is reloaded.
    const stopPolling = opts.pollMs ? poll(opts.pollMs, () => (s.failed || (s.pollWhile?.(s.data) ?? true)) && run()) : () => {};
    return () => { off(); stopPolling(); clearTimeout(s.timer); s.active = false; reportError(s.key, null); };
  }, deps);

  return { data, error, loading, reload: run };
}

/** Calls `read` every `ms` while the tab is visible, and at once when it becomes visible again; returns the stop. */
function poll(ms: number, read: () => void): () => void {
  const visible = () => document.visibilityState === "visible";
  const timer = setInterval(() => visible() && read(), ms);
  const onVisible = () => visible() && read();
  document.addEventListener("visibilitychange", onVisible);
  return () => {
    clearInterval(timer);
    document.removeEventListener("visibilitychange", onVisible);
  };
}
