#!/usr/bin/env node
// What comparing a fan-out by conflicts costs (issue 30): an isolated fan-out of 8 `mock/edit`
// workers in a 10,000-file repository, then `li job diff FANOUT` computing all 28 pairs (the
// store's pairs removed before each), against the same `li job diff` reading them stored, and
// against the floor: `git merge-tree --write-tree` run by hand for each pair. Measured interleaved
// in the same run. The comparison's cost is median(computing) - median(stored).
// Usage: npm run bench:compare [-- --runs N] [-- --files N] [-- --workers N]   (also part of npm run bench)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { makeRepo } from "./bench-isolate.mjs";
import { benchHome, li, median, numberArg, p90, printRows, runChecked as run, timeSync as time } from "./bench-lib.mjs";



/**
 * Each worker edits a file of its own; the odd ones also write README.md and the even ones append
 * to one module file, so two odd or two even workers conflict (12 of 28 pairs for 8 workers) and
 * the other pairs share no file.
 */
function prompt(n) {
  const lines = [];
  for (let k = 1; k <= n; k++) {
    lines.push(`worker ${k}: write src/mod${String(k).padStart(3, "0")}/file000.ts // changed by worker ${k}\\n`);
    lines.push(k % 2 ? `worker ${k}: write README.md worker ${k}\\n` : `worker ${k}: append src/mod099/file099.ts // worker ${k}\\n`);
  }
  return lines.join("\n");
}

export function benchCompare({ rounds = 9, files = 10_000, workers = 8, log = () => {} } = {}) {
  const per = 100;
  const repo = makeRepo(Math.ceil(files / per), per);
  const { home, env } = benchHome("li-bench-compare-home-");
  const liEnv = { ...env, LC_ALL: "C" };
  const liJson = (args) => JSON.parse(run(process.execPath, [li, "--machine", ...args], { cwd: repo, env: liEnv }).toString()).data;
  const t = { node: [], stored: [], computing: [], floor: [], shared: [] };
  let pairs = 0;
  let conflicting = 0;
  let sharing = 0;
  try {
    const sub = liJson(["o", "fanout", "-n", String(workers), "--model", "mock/edit", "--isolate", "worktree", "--detach", prompt(workers)]);
    liJson(["wait", sub.id, "--max-wait-seconds", "600"]);
    const first = liJson(["job", "diff", sub.id]);
    pairs = first.pairs.length;
    conflicting = first.pairs.filter((p) => p.conflict).length;
    sharing = first.pairs.filter((p) => p.both_files.length).length;
    if (first.pairs.some((p) => !p.computed)) throw new Error(`pairs not computed: ${JSON.stringify(first.pairs.filter((p) => !p.computed))}`);
    const heads = first.runs.map((r) => run("git", ["rev-parse", `li/${r.id}`], { cwd: repo }).toString().trim());
    const db = new Database(path.join(home, "state.db"));
    const forget = () => db.prepare("DELETE FROM change_pairs WHERE session_id = ?").run(sub.id);
    const merge = (i, j) => run("git", ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", heads[i], heads[j]], { cwd: repo, env: { ...process.env, LC_ALL: "C" } }, [0, 1]);
    const floor = (onlyShared = false) => {
      for (let i = 0; i < heads.length; i++) for (let j = i + 1; j < heads.length; j++) if (!onlyShared || i % 2 === j % 2) merge(i, j);
    };
    const diff = () => liJson(["job", "diff", sub.id]);
    // One of each first, untimed: the page cache holds the objects and li's bundle for all alike.
    floor();
    forget();
    diff();
    const variants = [
      ["node", () => run(process.execPath, ["-e", "0"], { env: liEnv })],
      ["stored", diff],
      ["computing", diff, forget],
      ["floor", () => floor()],
      // Only the pairs that share a file, the ones li asks git about (the rest cannot conflict).
      ["shared", () => floor(true)],
    ];
    for (let i = 0; i < rounds; i++) {
      for (let k = 0; k < variants.length; k++) {
        const [name, fn, before] = variants[(i + k) % variants.length];
        before?.();
        t[name].push(time(fn));
      }
      log(`round ${i + 1}/${rounds}`);
    }
    db.close();
    // Computing again must have found what the first computation found.
    const again = liJson(["job", "diff", sub.id]);
    if (again.pairs.filter((p) => p.conflict).length !== conflicting) throw new Error("the comparison found different conflicts on a later round");
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
  const m = Object.fromEntries(Object.entries(t).map(([k, xs]) => [k, median(xs)]));
  const cost = m.computing - m.stored;
  return {
    rounds,
    files,
    workers,
    pairs,
    conflicting,
    sharing,
    rows: [
      ["node -e 0 (baseline)", m.node, p90(t.node)],
      ["li job diff FANOUT, pairs stored", m.stored, p90(t.stored)],
      ["li job diff FANOUT, computing the pairs", m.computing, p90(t.computing)],
      [`git merge-tree by hand, ${pairs} pairs`, m.floor, p90(t.floor)],
      [`git merge-tree by hand, ${sharing} sharing a file`, m.shared, p90(t.shared)],
    ],
    cost,
    floor: m.floor,
    ratio: cost / m.floor,
    shared: m.shared,
    node: m.node,
  };
}

export function printCompare(r) {
  console.log(`a fan-out of ${r.workers} isolated workers compared by conflicts in a ${r.files.toLocaleString("en")}-file repository: ${r.pairs} pairs, ${r.conflicting} conflicting; ${r.rounds} interleaved rounds; ms, median and p90\n`);
  printRows(r.rows, r.node);
  console.log(`\nthe comparison's cost (computing - stored) ${r.cost.toFixed(1).padStart(8)} ms`);
  console.log(`git merge-tree by hand                     ${r.floor.toFixed(1).padStart(8)} ms`);
  console.log(`cost / by hand                             ${r.ratio.toFixed(2).padStart(8)}x  (cost / the ${r.sharing} pairs sharing a file by hand: ${(r.cost / r.shared).toFixed(2)}x)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printCompare(benchCompare({ rounds: numberArg("--runs", 9), files: numberArg("--files", 10_000), workers: numberArg("--workers", 8), log: (s) => process.stderr.write(s + "\n") }));
}
