/*
 * The order jest starts suites in (jest.config.js's testSequencer): the slowest first, so that on
 * two workers the run does not end with one worker idle while the other finishes a long suite it
 * took up last. jest orders by each suite's last duration only when its cache has one; a clean
 * clone (CI) has none, and jest then goes by file size, which put two 10–17 s suites of small
 * files last. So a suite's expected seconds are jest's cached time where there is one, else the
 * committed test/suite-times.json (a clean-clone CI run's times, written by
 * `node scripts/suite-times.mjs LOG`), else SHORT: a suite jest printed no time for ran under 5 s.
 * Suites that failed last time still go first, as jest's own sequencer does.
 */
import fs from "node:fs";
import path from "node:path";
import Sequencer from "@jest/test-sequencer";

/** The seconds assumed for a suite the list does not name (jest prints times of 5 s or more only). */
export const SHORT = 2.5;

const listed = JSON.parse(fs.readFileSync(new URL("../suite-times.json", import.meta.url), "utf8")).seconds;

/** The key of a suite run in test/suite-times.json: "<project> test/<name>.test.ts". */
export function suiteKey(test) {
  const { displayName, rootDir } = test.context.config;
  const project = typeof displayName === "string" ? displayName : displayName?.name;
  return `${project} ${path.relative(rootDir, test.path).split(path.sep).join("/")}`;
}

const Base = Sequencer.default ?? Sequencer;

export default class SlowFirst extends Base {
  /** Seconds this suite is expected to take: jest's cache (milliseconds), else the committed list, else SHORT. */
  expected(test) {
    const cached = this.time(test);
    return cached != null ? cached / 1000 : (listed[suiteKey(test)] ?? SHORT);
  }

  sort(tests) {
    const failed = new Map(tests.map((t) => [t, this.hasFailed(t) ? 1 : 0]));
    const seconds = new Map(tests.map((t) => [t, this.expected(t)]));
    // test.duration is what jest's scheduler reads (a few fast suites run in band); keep it jest's own.
    for (const t of tests) t.duration = this.time(t);
    return [...tests].sort((a, b) => failed.get(b) - failed.get(a) || seconds.get(b) - seconds.get(a) || suiteKey(a).localeCompare(suiteKey(b)));
  }
}
