/**
 * A fan-out compared by conflicts (issue 30): li job diff of an isolated fan-out shows each
 * worker's change, and for every pair of workers the files both changed and whether a three-way
 * merge of their heads over their base conflicts. Black-box, against real git repositories made
 * here; on PostgreSQL, the comparison made on the fan-out's host is read from another.
 */
import path from "node:path";
import { terminal, withStore } from "./helpers/fixtures.js";
import { git, makeRepo, tree, useNoIdentity } from "./helpers/git-repos.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { li, liData, tempHome, type Home } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";
import { dbOf } from "../src/lifecycle/db/handle.js";
import { WAIT_BOUNDS } from "../src/lifecycle/wait.js";

const scratch = useNoIdentity();

// Workers 1 and 2 write the same file differently; worker 3 writes another.
const PROMPT = "worker 1: write f.txt one\nworker 2: write f.txt two\nworker 3: write g.txt three";

/*
 * A fan-out here is a dozen process starts and as many git runs, and each test reads its result
 * with more li processes after it ends: on a loaded machine, the wait and the reads together pass
 * jest's default 60 s. The wait is li's longest window under --machine, and the test's timeout
 * leaves the reads after it as long again twice over, so li's wait, not jest, says when the
 * fan-out took too long (and the test names that step).
 */
const WAIT_S = WAIT_BOUNDS.max_wait_seconds.max;
const TEST_MS = 3 * WAIT_S * 1000;

const porcelain = (root: string) => git(root, "status", "--porcelain=v1", "--untracked-files=all");

/** The pairs of a `li job diff` result by their labels, as a person would name them. */
const byLabels = (pairs: any[]) => Object.fromEntries(pairs.map((p) => [p.labels.join("-"), p]));

async function fanout(env: NodeJS.ProcessEnv, cwd: string, extra: string[] = []): Promise<string> {
  const sub = await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", ...extra, "--detach", PROMPT], { env, cwd });
  return sub.id;
}

/** Forgets the stored pairs of `session`, as if its supervisor had been killed before comparing. */
const forgetPairs = (h: Home, session: string) => withStore(h, (s) => dbOf(s).run("DELETE FROM change_pairs WHERE session_id = ?", [session]));

function expectTheThreePairs(pairs: any[], runs: any[]): void {
  expect(pairs).toHaveLength(3);
  const ids = Object.fromEntries(runs.map((r: any) => [r.label, r.id]));
  expect(byLabels(pairs)).toEqual({
    "w1-w2": { a: ids.w1, b: ids.w2, labels: ["w1", "w2"], computed: true, both_files: ["f.txt"], conflict: true, conflicts: ["f.txt"] },
    "w1-w3": { a: ids.w1, b: ids.w3, labels: ["w1", "w3"], computed: true, both_files: [], conflict: false, conflicts: [] },
    "w2-w3": { a: ids.w2, b: ids.w3, labels: ["w2", "w3"], computed: true, both_files: [], conflict: false, conflicts: [] },
  });
}

describe("li job diff of an isolated fan-out, on its host", () => {
  let h: Home;
  beforeEach(() => {
    h = tempHome();
  });
  afterEach(() => h.cleanup());

  test("three workers: exactly one conflicting pair, 1–2 in f.txt; 1–3 and 2–3 share no file; the checkout is untouched", async () => {
    const root = makeRepo(scratch(), { "f.txt": "base\n", "h.txt": "h\n" });
    const before = { status: porcelain(root), files: tree(root), head: git(root, "rev-parse", "HEAD"), refs: git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main") };
    const id = await fanout(h.env, root);
    await liData(["wait", id, "--max-wait-seconds", String(WAIT_S)], { env: h.env, cwd: root });
    // The supervisor computed the pairs when its workers ended, before the fan-out finished: they
    // are stored before any li job diff (which would compute them), none later than the session's end.
    const stored = await withStore(h, (s) => dbOf(s).all<any>("SELECT a, b, conflict, computed_at FROM change_pairs WHERE session_id = ?", [id]));
    const endedAt = (await liData(["job", "status", id], { env: h.env })).jobs[0].ended_at;
    expect(stored.map((p) => [Date.parse(p.computed_at) <= Date.parse(endedAt), p.computed_at, endedAt])).toEqual(stored.map((p) => [true, p.computed_at, endedAt]));
    expect(stored).toHaveLength(3);

    const d = await liData(["job", "diff", id], { env: h.env, cwd: root });
    expect(d).toMatchObject({ id, mode: "fanout", status: "completed" });
    // Each worker's change side by side: its files, + and - counts, and outcome.
    expect(d.runs.map((r: any) => [r.label, r.outcome, r.files.map((f: any) => f.path), r.insertions, r.deletions])).toEqual([
      ["w1", "succeeded", ["f.txt"], 1, 1],
      ["w2", "succeeded", ["f.txt"], 1, 1],
      ["w3", "succeeded", ["g.txt"], 1, 0],
    ]);
    expectTheThreePairs(d.pairs, d.runs);
    expect(d.pairs.filter((p: any) => p.conflict)).toHaveLength(1);
    // They are the pairs the supervisor stored.
    const key = (p: any) => `${[p.a, p.b].sort().join(" ")} ${Boolean(p.conflict)}`;
    expect(stored.map(key).sort()).toEqual(d.pairs.map(key).sort());

    // A person reads the same: the table, then one line a pair.
    const human = await li(["job", "diff", id], { env: h.env, cwd: root });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/w1\s+completed\s+succeeded\s+1\s+1\s+1/);
    expect(human.stdout).toMatch(/w1–w2\s+conflict in f\.txt/);
    expect(human.stdout).toMatch(/w1–w3\s+no shared files, no conflict/);
    expect(human.stdout).toMatch(/w2–w3\s+no shared files, no conflict/);

    // Neither the supervisor's comparison nor li job diff's touched the checkout, its index or its refs.
    expect({ status: porcelain(root), files: tree(root), head: git(root, "rev-parse", "HEAD"), refs: git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main") }).toEqual(before);
  }, TEST_MS);

  test("pairs the store lacks (a supervisor killed before comparing) are computed by li job diff on the fan-out's host, once", async () => {
    const root = makeRepo(scratch(), { "f.txt": "base\n" });
    const id = await fanout(h.env, root);
    expect((await liData(["wait", id, "--max-wait-seconds", String(WAIT_S)], { env: h.env, cwd: root })).all_terminal).toBe(true);
    await forgetPairs(h, id);
    const before = tree(root);
    const r = await li(["--machine", "job", "diff", id], { env: h.env, cwd: root });
    const d = r.json.data;
    // Each worker ended with its change captured (a failure here names which, and li job diff's stderr says why).
    expect([d.runs.map((x: any) => [x.label, x.status, x.captured]), r.stderr]).toEqual([
      [
        ["w1", "completed", true],
        ["w2", "completed", true],
        ["w3", "completed", true],
      ],
      "",
    ]);
    expectTheThreePairs(d.pairs, d.runs);
    const first = await withStore(h, (s) => dbOf(s).all("SELECT a, b, computed_at FROM change_pairs WHERE session_id = ? ORDER BY a, b", [id]));
    expect(first).toHaveLength(3);
    // A second read computes nothing again: the rows are the first ones.
    await liData(["job", "diff", id], { env: h.env, cwd: root });
    expect(await withStore(h, (s) => dbOf(s).all("SELECT a, b, computed_at FROM change_pairs WHERE session_id = ? ORDER BY a, b", [id]))).toEqual(first);
    expect(tree(root)).toEqual(before);
    expect(porcelain(root)).toBe("");
  }, TEST_MS);

  test("a file one worker deletes and another changes conflicts; the same edit made by two workers merges cleanly", async () => {
    const root = makeRepo(scratch(), { "f.txt": "base\n" });
    const prompt = "worker 1: delete f.txt\nworker 2: write f.txt two\nworker 3: write f.txt two";
    const sub = await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", "--detach", prompt], { env: h.env, cwd: root });
    await liData(["wait", sub.id, "--max-wait-seconds", String(WAIT_S)], { env: h.env, cwd: root });
    const d = await liData(["job", "diff", sub.id], { env: h.env, cwd: root });
    expect(d.runs.map((r: any) => r.files.map((f: any) => `${f.status} ${f.path}`))).toEqual([["deleted f.txt"], ["modified f.txt"], ["modified f.txt"]]);
    const p = byLabels(d.pairs);
    expect(p["w1-w2"]).toMatchObject({ both_files: ["f.txt"], conflict: true, conflicts: ["f.txt"] });
    expect(p["w1-w3"]).toMatchObject({ both_files: ["f.txt"], conflict: true, conflicts: ["f.txt"] });
    expect(p["w2-w3"]).toMatchObject({ both_files: ["f.txt"], conflict: false, conflicts: [] });
    const human = await li(["job", "diff", sub.id], { env: h.env, cwd: root });
    expect(human.stdout).toMatch(/w2–w3\s+both changed f\.txt; merges cleanly/);
  }, TEST_MS);

  test("changes that share no file can still conflict: a directory renamed under another's new file, a file where another makes a directory", async () => {
    const root = makeRepo(scratch(), { "old/a.txt": "alpha\nbeta\ngamma\n", "r.txt": "r\n" });
    // Worker 1 moves old/ to new/ (git sees the rename) and adds a file d; worker 2 adds a file in
    // old/; worker 3 makes d a directory. Worker 2 and 3 touch unrelated paths.
    const prompt = [
      "worker 1: delete old/a.txt",
      "worker 1: write new/a.txt alpha\\nbeta\\ngamma\\n",
      "worker 1: write d f\\n",
      "worker 2: write old/b.txt b\\n",
      "worker 3: write d/x.txt y\\n",
    ].join("\n");
    const sub = await liData(["o", "fanout", "-n", "3", "--model", "mock/edit", "--isolate", "worktree", "--detach", prompt], { env: h.env, cwd: root });
    await liData(["wait", sub.id, "--max-wait-seconds", String(WAIT_S)], { env: h.env, cwd: root });
    const d = await liData(["job", "diff", sub.id], { env: h.env, cwd: root });
    expect(d.runs[0].files).toEqual(expect.arrayContaining([expect.objectContaining({ path: "new/a.txt", old_path: "old/a.txt", status: "renamed" })]));
    const p = byLabels(d.pairs);
    expect(p["w1-w2"]).toMatchObject({ computed: true, both_files: [], conflict: true, conflicts: ["new/b.txt"] });
    expect(p["w1-w3"]).toMatchObject({ computed: true, both_files: [], conflict: true });
    expect(p["w1-w3"].conflicts.length).toBeGreaterThan(0);
    expect(p["w2-w3"]).toMatchObject({ computed: true, both_files: [], conflict: false, conflicts: [] });
  }, TEST_MS);
});

describePostgres("a fan-out compared on its host, read from another", () => {
  const store = useSharedStore(["laptop", "gpu1"]);
  const [laptop, gpu1] = store.homes;

  beforeAll(() => {
    startDaemon(gpu1);
  });

  test("placed on gpu1: gpu1's supervisor compares the workers; the laptop reads the same pairs; pairs not computed yet are said, naming gpu1", async () => {
    const origin = makeRepo(scratch(), { "f.txt": "base\n" }, "gpu1-fanout");
    const before = { status: porcelain(origin), files: tree(origin) };
    const id = await fanout(laptop.env, origin, ["--host", "gpu1", "--allow-new-host"]);
    const done = await terminal(laptop.env, id, 90_000);
    expect(done).toMatchObject({ status: "completed", host: "gpu1" });

    const seen = await liData(["job", "diff", id], { env: laptop.env });
    expectTheThreePairs(seen.pairs, seen.runs);
    expect(await liData(["job", "diff", id], { env: gpu1.env })).toEqual(seen);
    expect({ status: porcelain(origin), files: tree(origin) }).toEqual(before);

    // Without the stored pairs, the laptop (which has no branches) computes none: it says which
    // pairs are not compared yet and that gpu1 computes them, and still shows the shared files.
    await forgetPairs(laptop, id);
    const r = await li(["--machine", "job", "diff", id], { env: laptop.env, cwd: path.dirname(origin) });
    expect(r.json?.ok).toBe(true);
    const pending = byLabels(r.json.data.pairs);
    expect(pending["w1-w2"]).toMatchObject({ computed: false, both_files: ["f.txt"], conflict: null, host: "gpu1" });
    expect(pending["w1-w2"].pending).toContain("host gpu1");
    expect(Object.values(pending).every((p: any) => !p.computed)).toBe(true);
    const human = await li(["job", "diff", id], { env: laptop.env });
    expect(human.stdout).toMatch(/w1–w2\s+not compared yet: host gpu1 holds their branches/);
    expect(human.stderr).toContain("3 of 3 pairs of workers are not compared yet");

    // li job diff on gpu1 computes them; the laptop then reads them.
    await liData(["job", "diff", id], { env: gpu1.env });
    const after = await liData(["job", "diff", id], { env: laptop.env });
    expectTheThreePairs(after.pairs, after.runs);
    expect({ status: porcelain(origin), files: tree(origin) }).toEqual(before);
  });
});
