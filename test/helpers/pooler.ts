import { PG_HINT, pgBinDir } from "./pg-cluster.mjs";
import { workerCluster } from "./pg-worker.mjs";
import { PGBOUNCER_HINT, pgbouncerBin, startPgbouncer } from "./pgbouncer.mjs";

/*
 * Suites that run li through a real PgBouncer in transaction mode (issue 49), in front of their
 * jest worker's cluster: skipped with a hint when PostgreSQL or PgBouncer is missing, unless
 * LI_TEST_REQUIRE_PGBOUNCER (or, for PostgreSQL, LI_TEST_REQUIRE_POSTGRES) is set, as CI sets
 * them: there their absence is a failure.
 */

export type Pooler = Awaited<ReturnType<typeof startPgbouncer>>;

/** A describe block with a pooler (one server connection per database unless `poolSize` says otherwise), started before it and stopped after it. */
export function describePooler(name: string, fn: (pooler: () => Pooler) => void, opts: { poolSize?: number } = {}): void {
  const missing = !pgBinDir() ? PG_HINT : !pgbouncerBin() ? PGBOUNCER_HINT : null;
  if (missing) {
    if (process.env.LI_TEST_REQUIRE_PGBOUNCER || (!pgBinDir() && process.env.LI_TEST_REQUIRE_POSTGRES)) {
      describe(name, () => test("PostgreSQL and PgBouncer are installed", () => { throw new Error(missing); }));
      return;
    }
    console.warn(`skipping "${name}": ${missing}`);
    describe.skip(name, () => fn(() => { throw new Error(missing); }));
    return;
  }
  describe(name, () => {
    let p: Pooler | undefined;
    beforeAll(async () => {
      p = await startPgbouncer(workerCluster().port, { poolSize: opts.poolSize ?? 1 });
    });
    afterAll(() => p?.stop());
    fn(() => {
      if (!p) throw new Error("describePooler: its beforeAll has not run yet");
      return p;
    });
  });
}
