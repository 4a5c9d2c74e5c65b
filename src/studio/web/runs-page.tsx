// #/ : the runs, newest first, filtered by what the hash's query says.
import { useEffect, useRef, useState } from "preact/hooks";
import { get, type Job } from "./api";
import { useLive } from "./live";
import { hashFor, navigate } from "./router";
import { JobTable, KINDS, Loading, STATUSES } from "./ui";

const PAGE = 50;
/** The most rows the server gives in one answer. */
const MAX_LIMIT = 200;

interface RunsAnswer { runs: Job[]; next_cursor: string | null; total: number }

interface Filters { status: string[]; kind: string; label: string; steps: boolean }

function filtersOf(q: URLSearchParams): Filters {
  return {
    status: (q.get("status") ?? "").split(",").filter((s) => STATUSES.includes(s)),
    kind: q.get("kind") ?? "",
    label: q.get("label") ?? "",
    steps: q.get("steps") === "1",
  };
}

function queryOf(f: Filters): URLSearchParams {
  const q = new URLSearchParams();
  if (f.status.length) q.set("status", f.status.join(","));
  if (f.kind) q.set("kind", f.kind);
  if (f.label) q.set("label", f.label);
  if (f.steps) q.set("steps", "1");
  return q;
}

function apiPath(f: Filters, extra: Record<string, string>): string {
  const q = queryOf(f);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return `/api/runs?${q.toString()}`;
}

export function RunsPage({ query }: { query: URLSearchParams }) {
  const f = filtersOf(query);
  const key = queryOf(f).toString();
  // Rows beyond the first page, from "Load more"; a live re-read asks for as many as are shown.
  const shown = useRef(PAGE);
  const [more, setMore] = useState<{ runs: Job[]; next: string | null } | null>(null);
  const [moreBusy, setMoreBusy] = useState(false);
  const [label, setLabel] = useState(f.label);

  useEffect(() => { shown.current = PAGE; setMore(null); }, [key]);
  useEffect(() => { setLabel(f.label); }, [f.label]);

  const live = useLive(async () => {
    const a = await get<RunsAnswer>(apiPath(f, { limit: String(Math.min(shown.current, MAX_LIMIT)) }));
    // Rows past what one answer holds stay as they were loaded, minus any now on the first page.
    if (shown.current <= MAX_LIMIT) setMore(null);
    else {
      const ids = new Set(a.runs.map((r) => r.id));
      setMore((m) => (m ? { runs: m.runs.filter((r) => !ids.has(r.id)), next: m.next } : null));
    }
    return a;
  }, [key]);

  const set = (patch: Partial<Filters>, replace = false) => navigate(hashFor("/", queryOf({ ...f, ...patch })), replace);

  // Typing into the label box moves the hash once it pauses.
  useEffect(() => {
    if (label === f.label) return;
    const t = setTimeout(() => set({ label }, true), 300);
    return () => clearTimeout(t);
  }, [label]);

  const firstIds = new Set(live.data?.runs.map((r) => r.id) ?? []);
  const runs = live.data ? [...live.data.runs, ...(more?.runs ?? []).filter((r) => !firstIds.has(r.id))] : [];
  const next = more ? more.next : live.data?.next_cursor ?? null;

  const loadMore = async () => {
    if (!next || moreBusy) return;
    setMoreBusy(true);
    try {
      const a = await get<RunsAnswer>(apiPath(f, { cursor: next, limit: String(PAGE) }));
      setMore((m) => ({ runs: [...(m?.runs ?? []), ...a.runs], next: a.next_cursor }));
      shown.current = runs.length + a.runs.length;
    } finally {
      setMoreBusy(false);
    }
  };

  const toggleStatus = (s: string) =>
    set({ status: f.status.includes(s) ? f.status.filter((x) => x !== s) : STATUSES.filter((x) => x === s || f.status.includes(x)) });

  return (
    <section class="page runs">
      <div class="page-head">
        <h2>Runs</h2>
        {live.data && <span class="muted total">{live.data.total} total</span>}
      </div>
      <form class="filters" id="filters" onSubmit={(e) => { e.preventDefault(); set({ label }); }}>
        <fieldset class="statuses">
          <legend>status</legend>
          {STATUSES.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" name="status" value={s} checked={f.status.includes(s)} onChange={() => toggleStatus(s)} />
              {s}
            </label>
          ))}
        </fieldset>
        <label class="field">
          kind
          <select id="filter-kind" name="kind" value={f.kind} onChange={(e) => set({ kind: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </label>
        <label class="field">
          label
          <input id="filter-label" name="label" type="search" value={label} placeholder="label" onInput={(e) => setLabel((e.target as HTMLInputElement).value)} />
        </label>
        <label class="check">
          <input id="filter-steps" type="checkbox" name="steps" checked={f.steps} onChange={() => set({ steps: !f.steps })} />
          show steps
        </label>
        {key && <a class="clear" href="#/">clear filters</a>}
      </form>
      {!live.data && live.loading ? <Loading what="runs" /> : live.data && (
        <>
          <JobTable jobs={runs} empty="No runs match." />
          {next && (
            <button id="load-more" type="button" class="btn" disabled={moreBusy} onClick={loadMore}>
              {moreBusy ? "Loading…" : "Load more"}
            </button>
          )}
        </>
      )}
    </section>
  );
}
