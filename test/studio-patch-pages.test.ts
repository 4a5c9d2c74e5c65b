import { pageOf } from "../src/studio/patch-pages.js";

/* The studio's patch pages (src/studio/patch-pages.ts): whole files' diffs, binary literals left out. */

const file = (name: string, lines: number) =>
  `diff --git a/${name} b/${name}\nindex 1..2 100644\n--- a/${name}\n+++ b/${name}\n@@ -1,${lines} +1,${lines} @@\n${Array.from({ length: lines }, (_, i) => `+line ${i}\n`).join("")}`;
const binary = "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0..3\nGIT binary patch\nliteral 5\nMcmb<msAQ-D00cq-YybcN\n\nliteral 0\nHcmV?d00001\n\n";

test("pages end where a file's diff begins, and the last one ends at the total", () => {
  const patch = Buffer.from(file("a.txt", 50) + file("b.txt", 50) + file("c.txt", 5));
  const first = pageOf(patch, 0, 900);
  expect([first.files, first.text.startsWith("diff --git a/a.txt"), first.cut_bytes]).toEqual([1, true, 0]);
  const second = pageOf(patch, first.end, 900);
  expect([second.files, second.text.startsWith("diff --git a/b.txt"), second.end]).toEqual([2, true, patch.length]);
  expect(first.text + second.text).toBe(patch.toString());
  // An offset inside a file's diff moves on to the next file's.
  expect(pageOf(patch, 10, 100000).text.startsWith("diff --git a/b.txt")).toBe(true);
});

test("a file larger than a page keeps its first lines; a binary literal is left out and counted", () => {
  const big = file("big.txt", 400);
  const patch = Buffer.from(big + binary);
  const p = pageOf(patch, 0, 1024);
  expect(p.text.length).toBeLessThanOrEqual(1024);
  expect(p.text.endsWith("\n")).toBe(true);
  expect([p.cut_bytes, p.end]).toEqual([big.length - p.text.length, big.length]);
  const rest = pageOf(patch, p.end, 1024);
  expect(rest.text).toBe("diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0..3\nGIT binary patch\n");
  expect([rest.binary_bytes, rest.end]).toEqual([binary.length - rest.text.length, patch.length]);
  expect(pageOf(Buffer.alloc(0), 0, 1024)).toMatchObject({ text: "", end: 0, total: 0, files: 0 });
});
