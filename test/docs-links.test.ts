import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/*
 * The README and the pages under docs/ link to each other (issue 32, item 5): every relative link
 * in README.md, CONTRIBUTING.md and docs/*.md must name a file that exists, and a `#anchor` must
 * name a heading of its target as GitHub slugs it. The README stays a page a newcomer reads.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const README_MAX_LINES = 300;

/** The Markdown files checked, relative to ROOT. */
function checkedFiles(root: string): string[] {
  const docs = fs.existsSync(path.join(root, "docs"))
    ? fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => path.join("docs", f))
    : [];
  return ["README.md", "CONTRIBUTING.md", ...docs].filter((f) => fs.existsSync(path.join(root, f)));
}

/** The text outside fenced code blocks, with fenced lines blanked so offsets keep their line. */
function outsideFences(text: string): string[] {
  let fence: string | null = null;
  return text.split("\n").map((line) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null) {
      if (m) fence = m[1];
      return fence === null ? line : "";
    }
    if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
    return "";
  });
}

/** Blank inline code spans (keeping newlines), so a link written in backticks is not a link. */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, " "));
}

/** GitHub's heading slug: lowercase, punctuation dropped (hyphens, underscores and spaces kept), spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a Markdown file offers: its headings' slugs (a repeated slug gets -1, -2, …) and explicit ids. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of outsideFences(text)) {
    const h = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      let s = base;
      let n = seen.get(base) ?? 0;
      while (out.has(s)) s = `${base}-${++n}`;
      seen.set(base, n);
      out.add(s);
    }
    for (const a of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) out.add(a[1]);
  }
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The inline links and images of a Markdown file, and its reference definitions. */
function links(file: string, text: string): Link[] {
  const body = withoutCodeSpans(outsideFences(text).join("\n"));
  const lineAt = (index: number) => body.slice(0, index).split("\n").length;
  const out: Link[] = [];
  const inline = /!?\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(<[^>\n]*>|(?:[^\s()]|\([^\s()]*\))*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
  for (const m of body.matchAll(inline)) out.push({ file, line: lineAt(m.index!), target: m[1].replace(/^<|>$/g, "") });
  for (const m of body.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>\n]*>|\S+)/gm)) out.push({ file, line: lineAt(m.index!), target: m[1].replace(/^<|>$/g, "") });
  return out;
}

/** Why a link does not resolve, or null when it does. Links with a scheme (https:, mailto:) are not checked. */
function broken(root: string, link: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith("//")) return null;
  const hash = link.target.indexOf("#");
  const filePart = decodeURIComponent(hash < 0 ? link.target : link.target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const target = filePart === "" ? path.join(root, link.file) : path.resolve(path.dirname(path.join(root, link.file)), filePart);
  if (!target.startsWith(root + path.sep) && target !== root) return `${link.target} leaves the repository`;
  if (!fs.existsSync(target)) return `${link.target}: no file ${path.relative(root, target)}`;
  if (anchor === null) return null;
  if (!target.endsWith(".md")) return `${link.target}: an anchor into a file that is not Markdown`;
  if (!anchors(fs.readFileSync(target, "utf8")).has(anchor)) return `${link.target}: no heading in ${path.relative(root, target)} has the slug #${anchor}`;
  return null;
}

/** Every broken link of the checked files under root, as "file:line: reason". */
function brokenLinks(root: string): string[] {
  return checkedFiles(root).flatMap((file) =>
    links(file, fs.readFileSync(path.join(root, file), "utf8")).flatMap((link) => {
      const why = broken(root, link);
      return why === null ? [] : [`${link.file}:${link.line}: ${why}`];
    }),
  );
}

describe("the checker itself", () => {
  test("slugs headings as GitHub does", () => {
    expect(slug("A shared store (PostgreSQL)")).toBe("a-shared-store-postgresql");
    expect(slug("Schedules, teams, monitor and stats")).toBe("schedules-teams-monitor-and-stats");
    expect(slug("`li wait`: exit status")).toBe("li-wait-exit-status");
    expect(slug("Plugging li into MCP clients")).toBe("plugging-li-into-mcp-clients");
    expect(slug("2026-12-03: `schedule.create` requires a fingerprint")).toBe("2026-12-03-schedulecreate-requires-a-fingerprint");
    expect([...anchors("# A\n## B\n```sh\n# B\n```\n## B\n## B\n")]).toEqual(["a", "b", "b-1", "b-2"]);
  });

  test("finds links outside code, and none inside it", () => {
    const text = "See [one](a.md#x) and ![two](img/b.png \"t\").\n`[no](c.md)`\n```\n[no](d.md)\n```\n[ref]: e.md\n";
    expect(links("f.md", text).map((l) => [l.line, l.target])).toEqual([
      [1, "a.md#x"],
      [1, "img/b.png"],
      [6, "e.md"],
    ]);
  });

  test("fails on a missing file and on a missing anchor", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-docs-links-")));
    try {
      fs.mkdirSync(path.join(dir, "docs"));
      fs.writeFileSync(path.join(dir, "README.md"), "# li\n\n[ok](docs/a.md#two-words) [gone](docs/b.md) [bad](docs/a.md#nope) [self](#li)\n");
      fs.writeFileSync(path.join(dir, "docs", "a.md"), "# A\n\n## Two words\n\n[up](../README.md#li) [up-bad](../README.md#a)\n");
      expect(brokenLinks(dir)).toEqual([
        "README.md:3: docs/b.md: no file docs/b.md",
        "README.md:3: docs/a.md#nope: no heading in docs/a.md has the slug #nope",
        "docs/a.md:5: ../README.md#a: no heading in README.md has the slug #a",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("README.md, CONTRIBUTING.md and docs/*.md", () => {
  test("every relative link names a file that exists, and every anchor a heading of it", () => {
    const all = checkedFiles(ROOT).flatMap((f) => links(f, fs.readFileSync(path.join(ROOT, f), "utf8")));
    expect(brokenLinks(ROOT)).toEqual([]);
    expect(all.length).toBeGreaterThan(30);
  });

  test("every page under docs/ can be reached from the README", () => {
    const reached = new Set<string>(["README.md"]);
    const queue = ["README.md"];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const link of links(file, fs.readFileSync(path.join(ROOT, file), "utf8"))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
        const filePart = decodeURIComponent(link.target.split("#")[0]);
        if (filePart === "" || !filePart.endsWith(".md")) continue;
        const rel = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), filePart));
        if (!reached.has(rel) && fs.existsSync(path.join(ROOT, rel))) {
          reached.add(rel);
          queue.push(rel);
        }
      }
    }
    const docs = checkedFiles(ROOT).filter((f) => f.startsWith("docs" + path.sep));
    expect(docs.filter((f) => !reached.has(f))).toEqual([]);
  });

  test(`the README is at most ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync(path.join(ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });
});
