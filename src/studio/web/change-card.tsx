// An isolated run's change (issue 30), as the store holds it: files, check, notices, the apply
// ledger and the patch. Live: it fills in when the run ends and its change and check are stored.
import { enc, get, type RunChange } from "./api";
import { Applies, CheckCard, FileTable, sha } from "./change-parts";
import { useLive } from "./live";
import { PatchView } from "./patch-view";
import { runHref } from "./router";
import { Age, bytes, Loading } from "./ui";

export function ChangeCard({ runId }: { runId: string }) {
  const live = useLive(() => get<RunChange>(`/api/runs/${enc(runId)}/change`), [runId]);
  const d = live.data;
  if (!d) return <section class="card" id="change"><h3>Change</h3>{live.loading ? <Loading what="change" /> : <p class="empty">No change to show.</p>}</section>;
  const c = d.change;
  const holder = d.change_of ?? d.id;
  return (
    <section class="card" id="change" data-captured={d.captured ? "1" : "0"}>
      <h3>Change{d.change_of && <> <span class="muted small">of its session <a class="mono" href={runHref(d.change_of)}>{d.change_of}</a></span></>}</h3>
      {!c ? <p class="muted" id="change-note">{d.note}</p> : (
        <>
          <p class="sub" id="change-summary">
            <span id="change-files">{c.files.length} file{c.files.length === 1 ? "" : "s"}</span> · <span class="ins">+{c.insertions}</span> <span class="del">−{c.deletions}</span>
            {" "}· branch <code class="mono">{c.branch}</code> · {sha(c.base_sha)} → {sha(c.head_sha)} · captured <Age at={c.captured_at} />{c.host && <> on {c.host}</>}
          </p>
          {c.truncated && (
            <p class="notice" id="change-truncated">
              The patch is {bytes(c.patch_bytes)}, over the {bytes(d.max_patch_bytes)} the store keeps for a run: only its file list is here.
              {" "}<code class="mono">li job diff {holder}</code>{c.host && <> on {c.host}</>} shows it from its branch.
            </p>
          )}
          {!!c.source_changed?.length && (
            <p class="notice" id="change-source-changed">The checkout it was made from changed meanwhile, at: <code class="mono">{c.source_changed.join(", ")}</code></p>
          )}
          <CheckCard check={c.check} pending={d.check_pending} />
          <Applies applies={d.applies} />
          <FileTable files={c.files} id="change-file-list" />
          {!c.truncated && c.patch_bytes > 0 && <PatchView key={c.head_sha} runId={holder} />}
        </>
      )}
    </section>
  );
}
