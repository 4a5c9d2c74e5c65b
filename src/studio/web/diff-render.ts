// The patch renderer, a bundle of its own (/diff.js): diff2html parses git's patch text and
// renders it, so the page has no diff parser of its own. Loaded only by a page that shows a
// patch, so the runs pages never carry its weight. diff2html escapes the text it renders.
import { html, parse } from "diff2html";

/** A page of a patch (whole files' diffs) as HTML; a binary file says "binary" instead of its literal. */
export function renderPatch(text: string): string {
  const files = parse(text);
  for (const f of files) if (f.isBinary) for (const b of f.blocks) b.header = "binary";
  return html(files, { drawFileList: false, outputFormat: "line-by-line", matching: "none" });
}
