#!/usr/bin/env node
// A read on a PostgreSQL store against the same read on SQLite (issue 37): `li --machine job list`
// on two stores holding the same runs, interleaved with `node -e 0` in the same run. The server is a
// throw-away one on the loopback (test/helpers/pg-cluster.mjs), so PostgreSQL's binaries must be installed.
// With PgBouncer installed (test/helpers/pgbouncer.mjs), the same read through it in transaction mode
// too (issue 49): the pooled read, against the same SQLite read.
// Usage: node scripts/bench-pg.mjs [--pg-runs N] [--li PATH]   (npm run bench runs it too, when they are)
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { pgBinDir, startCluster } from "../test/helpers/pg-cluster.mjs";
import { pgbouncerBin, startPgbouncer } from "../test/helpers/pgbouncer.mjs";
import { benchHome, li as ourLi, median, numberArg, p90, printRows, runChecked, timeSync } from "./bench-lib.mjs";
import { verdict } from "./bench-guards.mjs";

export const pgAvailable = () => !!pgBinDir();

export async function benchPg({ rounds, lis = [ourLi] }) {
  const cluster = await startCluster();
  const pooler = pgbouncerBin() ? await startPgbouncer(cluster.port, { poolSize: 5 }) : null;
  const sqlite = benchHome("li-bench-pg-sqlite-");
  const pg = benchHome("li-bench-pg-");
  const pooled = pooler ? benchHome("li-bench-pg-pooled-") : null;
  const homes = [sqlite, pg, ...(pooled ? [pooled] : [])];
  try {
    pg.env.LI_STORE = cluster.createDatabase();
    if (pooled) pooled.env.LI_STORE = pooler.url(cluster.createDatabase());
    for (const h of homes) for (let i = 0; i < 5; i++) runChecked(process.execPath, [lis[0], "agent", "mock/echo", `bench ${i}`], { env: h.env });
    const node = [];
    const times = lis.map(() => ({ sqlite: [], pg: [], pooled: [] }));
    for (let r = 0; r < rounds; r++) {
      node.push(timeSync(() => runChecked(process.execPath, ["-e", "0"], {})));
      lis.forEach((li, i) => {
        const read = (h, into) => into.push(timeSync(() => runChecked(process.execPath, [li, "--machine", "job", "list"], { env: h.env })));
        const order = [[sqlite, times[i].sqlite], [pg, times[i].pg], ...(pooled ? [[pooled, times[i].pooled]] : [])];
        // Each store first in turn, so none always pays for a cold cache.
        for (let k = 0; k < order.length; k++) read(...order[(r + k) % order.length]);
      });
    }
    return { rounds, node, times, lis, pooled: !!pooled };
  } finally {
    for (const h of homes) fs.rmSync(h.home, { recursive: true, force: true });
    pooler?.stop();
    cluster.stop();
  }
}

export function printPg(r) {
  console.log(`PostgreSQL read: li --machine job list on PostgreSQL and on SQLite, ${r.rounds} interleaved rounds; medians`);
  r.lis.forEach((li, i) => {
    const tag = r.lis.length > 1 ? ` [${li}]` : "";
    const t = r.times[i];
    printRows(
      [[`job list on SQLite${tag}`, median(t.sqlite), p90(t.sqlite)], [`job list on PostgreSQL${tag}`, median(t.pg), p90(t.pg)], ...(r.pooled ? [[`job list through PgBouncer${tag}`, median(t.pooled), p90(t.pooled)]] : [])],
      median(r.node),
    );
    console.log(`PostgreSQL read ${pgRatio(r, i).toFixed(2)}x the SQLite read${tag} (guard <= 1.4x: ${verdict("pg", pgRatio(r, i))})`);
    if (r.pooled) console.log(`pooled read (PgBouncer, transaction mode) ${(median(t.pooled) / median(t.sqlite)).toFixed(2)}x the SQLite read${tag} (target <= 1.3x)`);
    else console.log("pooled read: skipped, PgBouncer is not installed (apt-get install pgbouncer)");
  });
}

/** The PostgreSQL read's guard figure: its median against the SQLite read's, for li `i`. */
export const pgRatio = (r, i = 0) => median(r.times[i].pg) / median(r.times[i].sqlite);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const extra = process.argv.includes("--li") ? [process.argv[process.argv.indexOf("--li") + 1]] : [];
  printPg(await benchPg({ rounds: numberArg("--pg-runs", 21), lis: [ourLi, ...extra] }));
}
