/** The human views of li job diff and li job apply: a header, notes, a stat table, a coloured patch. */
import type { ChangedFile } from "../lifecycle/changes/records.js";
import { checkLine } from "./change-view.js";
import { table } from "./format.js";
import { colourOn, tint, type Tint } from "./terminal.js";

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 12) : "-");

const MARK: Record<ChangedFile["status"], string> = { added: "A", modified: "M", deleted: "D", renamed: "R", copied: "C", type_changed: "T" };

/** One line per file (renames as old => new), + and - counts, and the totals. */
export function statLines(files: ChangedFile[], insertions: number, deletions: number): string {
  if (!files.length) return "no files changed";
  const colour = colourOn();
  const name = (f: ChangedFile) => (f.old_path ? `${f.old_path} => ${f.path}` : f.path);
  const width = Math.max(...files.map((f) => name(f).length));
  const lines = files.map((f) => {
    const counts = f.insertions === null ? "binary" : `${tint(`+${f.insertions}`, "green", colour)} ${tint(`-${f.deletions}`, "red", colour)}`;
    return ` ${MARK[f.status] ?? "?"} ${name(f).padEnd(width)} | ${counts}`;
  });
  lines.push(` ${files.length} file${files.length === 1 ? "" : "s"} changed, ${tint(`+${insertions}`, "green", colour)} ${tint(`-${deletions}`, "red", colour)}`);
  return lines.join("\n");
}

/** A unified patch, coloured the way git colours one, only for a terminal. */
export function colourPatch(text: string): string {
  if (!colourOn()) return text;
  let inHeader = false;
  return text
    .split("\n")
    .map((line) => {
      let t: Tint | undefined;
      if (line.startsWith("diff --git ")) {
        inHeader = true;
        t = "bold";
      } else if (line.startsWith("@@")) {
        inHeader = false;
        t = "blue";
      } else if (inHeader) t = "bold";
      else if (line.startsWith("+")) t = "green";
      else if (line.startsWith("-")) t = "red";
      return tint(line, t, true);
    })
    .join("\n");
}

/** The lines above a change: which run, branch, base..head, host, and what to know about it. */
export function changeHeader(d: { id: string; holder?: string; host: string | null; status: string; change: any | null; cumulative?: { runs: string[] } }): string {
  const c = d.change;
  const of = d.holder && d.holder !== d.id ? ` (the change of ${d.holder})` : "";
  if (!c) return `run ${d.id}${of}  status ${d.status}  host ${d.host ?? "-"}\nno change captured yet: it is captured when the run ends`;
  const range = d.cumulative ? `${short(c.base_sha)}..${short(c.head_sha)} over ${d.cumulative.runs.join(", ")}` : `${short(c.base_sha)}..${short(c.head_sha)}`;
  return `run ${d.id}${of}  branch ${c.branch}  ${range}  host ${c.host ?? "-"}`;
}

/** A fan-out: each run's change in one table. */
export function fanoutTable(d: { id: string; runs: any[] }): string {
  const rows = d.runs.map((r) => ({
    id: r.id,
    label: r.label,
    status: r.status,
    outcome: r.outcome,
    files: r.captured ? r.files.length : "-",
    "+": r.captured ? r.insertions : "-",
    "-": r.captured ? r.deletions : "-",
    check: checkLine(r.check),
  }));
  const withCheck = d.runs.some((r) => r.check);
  const cols: Parameters<typeof table>[1] = ["id", "label", "status", "outcome", "files", { key: "+", header: "+" }, { key: "-", header: "-" }, ...(withCheck ? ["check"] : [])];
  return [`fan-out ${d.id}: the change of each run (li job diff RUN for one)`, table(rows, cols)].join("\n");
}

/** A fan-out's pairs, one line each: which files both workers changed and whether they conflict. */
export function pairLines(pairs: { a: string; b: string; labels: (string | null)[]; computed: boolean; both_files: string[] | null; conflict: boolean | null; conflicts: string[] | null; pending?: string }[]): string {
  if (!pairs.length) return "";
  const colour = colourOn();
  const name = (p: (typeof pairs)[number]) => `${p.labels[0] ?? p.a}–${p.labels[1] ?? p.b}`;
  const width = Math.max(...pairs.map((p) => name(p).length));
  const lines = pairs.map((p) => {
    const shared = p.both_files?.length ? `both changed ${p.both_files.join(", ")}` : "no shared files";
    const said = !p.computed
      ? `not compared yet: ${p.pending}${p.both_files ? ` (${shared})` : ""}`
      : p.conflict
        ? tint(`conflict in ${p.conflicts!.join(", ") || "(no path named)"}`, "red", colour) + (p.both_files!.length ? "" : " (no shared files)")
        : p.both_files!.length
          ? `${shared}; merges cleanly`
          : "no shared files, no conflict";
    return `  ${name(p).padEnd(width)}  ${said}`;
  });
  return ["each pair of workers (a three-way merge of their heads over their base, predicted on the host of their branches):", ...lines].join("\n");
}
