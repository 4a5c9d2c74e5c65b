#!/usr/bin/env node
// What `--isolate worktree` costs, in a 10,000-file repository: an isolated `mock/edit` run against
// the same run unisolated, and against the bare git floor (the same git work by hand: the checkout's
// status, `git worktree add`, the edit, add and commit, the three diffs, the status again and
// `git worktree remove`), all measured interleaved in the same run. Target: isolation's cost
// (median isolated - median unisolated) at most 1.3x the floor.
// Usage: npm run bench:isolate [-- --runs N] [-- --files N] [-- --compare OTHER/bin/li.js]   (also part of npm run bench)
// --compare adds the isolated run of another build of li (the one before a change), interleaved too.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchHome, li, median, numberArg, p90, printRows, runChecked as run, timeSync as time } from "./bench-lib.mjs";

const stringArg = (name) => (process.argv.indexOf(name) > 0 ? path.resolve(process.argv[process.argv.indexOf(name) + 1]) : null);
const WHO = ["-c", "user.name=b", "-c", "user.email=b@b"];
// li's plumbing runs none of the repository's hooks (src/runtime/worktree/git.ts); the floor does the same.
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"];
const PLAIN_DIFF = ["--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative"];

const git = (cwd, args, opts = {}) => run("git", args, { cwd, ...opts, env: { ...process.env, LC_ALL: "C", ...opts.env } });

/** A repository of `dirs` x `per` small files in one commit, in a fresh temporary directory. */
export function makeRepo(dirs = 100, per = 100) {
  const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-isolate-")));
  git(repo, ["init", "-q", "-b", "main"]);
  for (let d = 0; d < dirs; d++) {
    const dir = path.join(repo, "src", `mod${String(d).padStart(3, "0")}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < per; f++) fs.writeFileSync(path.join(dir, `file${String(f).padStart(3, "0")}.ts`), `export const v${d}_${f} = ${d * per + f};\n// module ${d}, file ${f}\n`);
  }
  fs.writeFileSync(path.join(repo, "README.md"), "bench\n");
  fs.writeFileSync(path.join(repo, ".gitignore"), "node_modules/\n");
  git(repo, ["add", "-A"]);
  git(repo, [...WHO, "commit", "-q", "-m", "init"]);
  return repo;
}

/**
 * The floor: by hand, the git work an isolated run makes li do (see src/runtime/worktree/): the
 * checkout's dirty paths before (source-watch), the worktree at HEAD on a new branch, the agent's
 * edit, add and commit without hooks, the binary patch and the per-file stats, the dirty paths
 * again, and the worktree removed (the branch stays, as li's does).
 */
function floor(repo, scratch, base, n) {
  const wt = path.join(scratch, `floor-${n}`);
  const status = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"];
  git(repo, status, { env: { GIT_OPTIONAL_LOCKS: "0" } });
  git(repo, [...NO_HOOKS, "worktree", "add", "-q", "-b", `floor/${n}`, wt, "HEAD"]);
  fs.writeFileSync(path.join(wt, "x.txt"), "1\n");
  git(wt, [...NO_HOOKS, "add", "-A"]);
  git(wt, [...NO_HOOKS, ...WHO, "commit", "-q", "--no-verify", "-m", "floor"]);
  const range = [...PLAIN_DIFF, "-M", base, "HEAD", "--"];
  const out = `${wt}.patch`;
  git(wt, ["diff", "--binary", "--full-index", `--output=${out}`, ...range]);
  fs.readFileSync(out);
  fs.rmSync(out);
  git(wt, ["diff", "--name-status", "-z", ...range]);
  git(wt, ["diff", "--numstat", "-z", ...range]);
  git(repo, status, { env: { GIT_OPTIONAL_LOCKS: "0" } });
  git(repo, ["worktree", "remove", "--force", "--force", wt]);
}

/** Runs the comparison; returns rows of [name, median ms, p90 ms] and the cost, floor and ratio. */
export function benchIsolate({ rounds = 9, files = 10_000, compare = null, log = () => {} } = {}) {
  const per = 100;
  const repo = makeRepo(Math.ceil(files / per), per);
  const { home, env } = benchHome("li-bench-isolate-home-");
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-isolate-floor-"));
  const base = git(repo, ["rev-parse", "HEAD"]).toString().trim();
  const liEnv = { ...env, LC_ALL: "C" };
  const agent = (args, bin = li) => run(process.execPath, [bin, "--machine", "agent", ...args, "mock/edit", "write x.txt 1"], { cwd: repo, env: liEnv });
  const t = { node: [], plain: [], isolated: [], floor: [], other: [] };
  try {
    // One of each first, untimed: the page cache holds the repository and li's bundle for all alike.
    agent([]);
    fs.rmSync(path.join(repo, "x.txt"));
    agent(["--isolate", "worktree"]);
    if (compare) agent(["--isolate", "worktree"], compare);
    floor(repo, scratch, base, "warm");
    const variants = [
      ["node", () => run(process.execPath, ["-e", "0"], { env: liEnv })],
      ["plain", () => agent([]), () => fs.rmSync(path.join(repo, "x.txt"))],
      ["isolated", () => agent(["--isolate", "worktree"])],
      ["floor", (i) => floor(repo, scratch, base, i)],
      ...(compare ? [["other", () => agent(["--isolate", "worktree"], compare)]] : []),
    ];
    for (let i = 0; i < rounds; i++) {
      // Each round starts from a different variant, so none always follows the same one.
      for (let k = 0; k < variants.length; k++) {
        const [name, fn, after] = variants[(i + k) % variants.length];
        t[name].push(time(() => fn(i)));
        after?.();
      }
      log(`round ${i + 1}/${rounds}`);
    }
    // li removed every worktree it made (or the isolated runs did not do all of their work).
    const left = fs.existsSync(path.join(home, "worktrees")) ? fs.readdirSync(path.join(home, "worktrees")).filter((f) => !f.endsWith(".lock")) : [];
    if (left.length) throw new Error(`isolated runs left worktrees behind: ${left.join(", ")}`);
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
  const m = Object.fromEntries(Object.entries(t).filter(([, xs]) => xs.length).map(([k, xs]) => [k, median(xs)]));
  const cost = m.isolated - m.plain;
  return {
    rounds,
    files,
    rows: [
      ["node -e 0 (baseline)", m.node, p90(t.node)],
      ["li agent mock/edit (unisolated)", m.plain, p90(t.plain)],
      ["li agent --isolate worktree mock/edit", m.isolated, p90(t.isolated)],
      ["bare git floor (same git work by hand)", m.floor, p90(t.floor)],
      ...(compare ? [["--isolate worktree, --compare's li", m.other, p90(t.other)]] : []),
    ],
    cost,
    floor: m.floor,
    ratio: cost / m.floor,
    node: m.node,
    plain: m.plain,
    other: m.other,
  };
}

export function printIsolate(r) {
  console.log(`isolated runs in a ${r.files.toLocaleString("en")}-file repository, ${r.rounds} interleaved rounds; ms, median and p90\n`);
  printRows(r.rows, r.node);
  console.log(`\nisolation's cost (isolated - unisolated)   ${r.cost.toFixed(1).padStart(8)} ms`);
  console.log(`bare git floor                             ${r.floor.toFixed(1).padStart(8)} ms`);
  console.log(`cost / floor                               ${r.ratio.toFixed(2).padStart(8)}x  (target <= 1.3x)`);
  if (r.other !== undefined) console.log(`--compare's li: cost ${(r.other - r.plain).toFixed(1)} ms, cost / floor ${((r.other - r.plain) / r.floor).toFixed(2)}x`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printIsolate(benchIsolate({ rounds: numberArg("--runs", 9), files: numberArg("--files", 10_000), compare: stringArg("--compare"), log: (s) => process.stderr.write(s + "\n") }));
}
