import { PG_HINT, pgBinDir } from "./pg-cluster.mjs";

/*
 * Suites that need PostgreSQL: skipped with a hint when its binaries are missing, unless
 * LI_TEST_REQUIRE_POSTGRES is set, as CI sets it: there their absence is a failure. A suite takes
 * its databases in its jest worker's cluster (workerCluster, test/helpers/pg-worker.mjs), and
 * starts one of its own (startCluster, test/helpers/pg-cluster.mjs) only to restart, stop or
 * reconfigure it. Both are plain JS, which jest's global set-up also loads.
 */

export { PG_HINT, pgBinDir, startCluster, freePort, createDatabase, type PgCluster } from "./pg-cluster.mjs";
export { workerCluster } from "./pg-worker.mjs";

export function describePostgres(name: string, fn: () => void): void {
  if (pgBinDir()) return describe(name, fn);
  if (process.env.LI_TEST_REQUIRE_POSTGRES) {
    describe(name, () => test("PostgreSQL is installed", () => { throw new Error(PG_HINT); }));
    return;
  }
  console.warn(`skipping "${name}": ${PG_HINT}`);
  describe.skip(name, fn);
}
