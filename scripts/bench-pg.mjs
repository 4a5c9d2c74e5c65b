#!/usr/bin/env node
// A read on a PostgreSQL store against the same read on SQLite (issue 37): `li --machine job list`
// on two stores holding the same runs, interleaved with `node -e 0` in the same run. The server is a
// throw-away one on the loopback (test/helpers/pg-cluster.mjs), so PostgreSQL's binaries must be installed.
// Usage: node scripts/bench-pg.mjs [--pg-runs N] [--li PATH]   (npm run bench runs it too, when they are)
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { pgBinDir, startCluster } from "../test/helpers/pg-cluster.mjs";
import { benchHome, li as ourLi, median, numberArg, p90, printRows, runChecked, timeSync } from "./bench-lib.mjs";
import { verdict } from "./bench-guards.mjs";

export const pgAvailable = () => !!pgBinDir();

export async function benchPg({ rounds, lis = [ourLi] }) {
  const cluster = await startCluster();
  const sqlite = benchHome("li-bench-pg-sqlite-");
  const pg = benchHome("li-bench-pg-");
  try {
    pg.env.LI_STORE = cluster.createDatabase();
    for (const h of [sqlite, pg]) for (let i = 0; i < 5; i++) runChecked(process.execPath, [lis[0], "agent", "mock/echo", `bench ${i}`], { env: h.env });
    const node = [];
    const times = lis.map(() => ({ sqlite: [], pg: [] }));
    for (let r = 0; r < rounds; r++) {
      node.push(timeSync(() => runChecked(process.execPath, ["-e", "0"], {})));
      lis.forEach((li, i) => {
        const read = (h, into) => into.push(timeSync(() => runChecked(process.execPath, [li, "--machine", "job", "list"], { env: h.env })));
        if (r % 2) read(sqlite, times[i].sqlite), read(pg, times[i].pg);
        else read(pg, times[i].pg), read(sqlite, times[i].sqlite);
      });
    }
    return { rounds, node, times, lis };
  } finally {
    for (const h of [sqlite, pg]) fs.rmSync(h.home, { recursive: true, force: true });
    cluster.stop();
  }
}

export function printPg(r) {
  console.log(`PostgreSQL read: li --machine job list on PostgreSQL and on SQLite, ${r.rounds} interleaved rounds; medians`);
  r.lis.forEach((li, i) => {
    const tag = r.lis.length > 1 ? ` [${li}]` : "";
    printRows([[`job list on SQLite${tag}`, median(r.times[i].sqlite), p90(r.times[i].sqlite)], [`job list on PostgreSQL${tag}`, median(r.times[i].pg), p90(r.times[i].pg)]], median(r.node));
    console.log(`PostgreSQL read ${pgRatio(r, i).toFixed(2)}x the SQLite read${tag} (guard <= 1.4x: ${verdict("pg", pgRatio(r, i))})`);
  });
}

/** The PostgreSQL read's guard figure: its median against the SQLite read's, for li `i`. */
export const pgRatio = (r, i = 0) => median(r.times[i].pg) / median(r.times[i].sqlite);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const extra = process.argv.includes("--li") ? [process.argv[process.argv.indexOf("--li") + 1]] : [];
  printPg(await benchPg({ rounds: numberArg("--pg-runs", 21), lis: [ourLi, ...extra] }));
}
