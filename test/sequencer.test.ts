/**
 * The order jest starts suites in (test/helpers/sequencer.mjs): slowest first by jest's cache, else
 * by the committed test/suite-times.json, else as short; a suite that failed last time first of all.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./helpers/li.js";

const times = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "suite-times.json"), "utf8")).seconds as Record<string, number>;

async function sequencer() {
  const mod = await import(pathToFileURL(path.join(ROOT, "test", "helpers", "sequencer.mjs")).href);
  return { Seq: mod.default, SHORT: mod.SHORT as number };
}

/** A test as jest hands it to a sequencer: its path and its project's config (no cache unless `cacheDirectory`). */
function fakeTest(project: string, name: string, cacheDirectory?: string) {
  const config = { displayName: { name: project, color: "white" }, rootDir: ROOT, cache: !!cacheDirectory, cacheDirectory: cacheDirectory ?? os.tmpdir(), id: `seq-test-${project}`, haste: {} };
  return { path: path.join(ROOT, "test", `${name}.test.ts`), context: { config, hasteFS: { getSize: () => 0 } } };
}

test("with no cache, suites go slowest first by test/suite-times.json; a suite it does not name counts as short", async () => {
  const { Seq, SHORT } = await sequencer();
  const listed = Object.entries(times).filter(([, s]) => s > SHORT);
  const [slow, , mid] = listed.map(([k]) => k);
  const named = [slow, mid].map((k) => {
    const [project, file] = k.split(" ");
    return fakeTest(project, path.basename(file, ".test.ts"));
  });
  const unknown = fakeTest("sqlite", "no-such-suite");
  const order = new Seq({}).sort([unknown, named[1], named[0]]);
  expect(order.map((t: any) => `${t.context.config.displayName.name} ${path.relative(ROOT, t.path)}`)).toEqual([slow, mid, "sqlite test/no-such-suite.test.ts"]);
  // jest's own duration (what its scheduler reads) is left as jest's cache has it: none here.
  expect(order.map((t: any) => t.duration)).toEqual([undefined, undefined, undefined]);
});

test("jest's cached time wins over the committed list, and a suite that failed last time goes first", async () => {
  const { Seq } = await sequencer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-seq-"));
  try {
    const [a, b, c] = ["wait-d6", "queue", "ids"].map((n) => fakeTest("sqlite", n, dir));
    const seq = new Seq({});
    // What jest's sequencer keeps per project after a run: [0 failed | 1 passed, milliseconds].
    fs.writeFileSync(seq._getCachePath(a.context), JSON.stringify({ [a.path]: [1, 1000], [b.path]: [1, 90_000], [c.path]: [0, 10] }));
    const order = seq.sort([a, b, c]);
    expect(order.map((t: any) => path.basename(t.path))).toEqual(["ids.test.ts", "queue.test.ts", "wait-d6.test.ts"]);
    expect(order.map((t: any) => t.duration)).toEqual([10, 90_000, 1000]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("every suite test/suite-times.json names exists, in one of jest.config.js's two projects; jest.config.js uses the sequencer", async () => {
  const config = (await import(pathToFileURL(path.join(ROOT, "jest.config.js")).href)).default;
  expect(config.testSequencer).toBe("<rootDir>/test/helpers/sequencer.mjs");
  for (const key of Object.keys(times)) {
    const [project, file] = key.split(" ");
    expect([key, ["sqlite", "postgres"].includes(project), fs.existsSync(path.join(ROOT, file))]).toEqual([key, true, true]);
  }
});
