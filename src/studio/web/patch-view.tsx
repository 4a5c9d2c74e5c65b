// A run's stored patch rendered by diff2html (/diff.js), a page at a time: the first page loads
// with the card, the next on request, so a patch of many MiB never stalls the page.
import { useEffect, useRef, useState } from "preact/hooks";
import { enc, get, type PatchPage } from "./api";
import { loadRenderer } from "./diff-loader";
import { bytes, Loading } from "./ui";

interface Shown { page: PatchPage; html: string }

export function PatchView({ runId }: { runId: string }) {
  const [pages, setPages] = useState<Shown[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const alive = useRef(true);

  const load = async (offset: number) => {
    setBusy(true);
    setError(null);
    try {
      const [r, page] = await Promise.all([loadRenderer(), get<PatchPage>(`/api/runs/${enc(runId)}/patch?offset=${offset}`)]);
      if (alive.current) setPages((ps) => [...ps, { page, html: r.renderPatch(page.text) }]);
    } catch (e) {
      if (alive.current) setError(`the patch could not be shown: ${(e as Error)?.message ?? e}`);
    } finally {
      if (alive.current) setBusy(false);
    }
  };

  useEffect(() => {
    alive.current = true;
    void load(0);
    return () => { alive.current = false; };
  }, [runId]);

  const last = pages.at(-1)?.page;
  const binary = pages.reduce((n, p) => n + p.page.binary_bytes, 0);
  const cut = pages.reduce((n, p) => n + p.page.cut_bytes, 0);
  return (
    <div id="patch" class="patch" data-pages={pages.length} data-complete={last && last.end >= last.total ? "1" : "0"}>
      {pages.map((p) => <div key={p.page.offset} class="patch-page" dangerouslySetInnerHTML={{ __html: p.html }} />)}
      {(binary > 0 || cut > 0) && (
        <p class="muted small" id="patch-omitted">
          {binary > 0 && `${bytes(binary)} of binary data not shown. `}
          {cut > 0 && `${bytes(cut)} of a file larger than a page not shown (li job diff ${runId} has all of it).`}
        </p>
      )}
      {last && last.end < last.total && (
        <button id="patch-more" type="button" class="btn" disabled={busy} onClick={() => load(last.end)}>
          Show more ({bytes(last.end)} of {bytes(last.total)} shown)
        </button>
      )}
      {busy && <Loading what="patch" />}
      {error && <p class="error" id="patch-error">{error}</p>}
    </div>
  );
}
