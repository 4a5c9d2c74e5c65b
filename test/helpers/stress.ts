/*
 * The stress tier (CONTRIBUTING, "Tests and benchmarks"). A proof that repeats one property for
 * confidence (many daemons racing for many runs, many kill/end races, many concurrent submissions)
 * runs at its full count under `npm run test:stress` and at a reduced count, which still proves its
 * property, under `npm test`: one test either way, its count from `stressCount`. LI_TEST_STRESS=1
 * is the one switch; `STRESS_SUITES` in jest.config.js lists the suites the tier runs
 * (test/stress-tier.test.ts checks the list against the suites that import this module).
 */
export const STRESS = process.env.LI_TEST_STRESS === "1";

/** `full` in the stress tier, `reduced` in npm test: a count, or the rows a table-driven proof runs through. */
export function stressCount<T>(reduced: T, full: T): T {
  return STRESS ? full : reduced;
}
