/**
 * Issue 29: li job diff and li job apply, black-box against the built CLI, on isolated runs
 * seeded in the store (helpers/isolated.ts), applied to real checkouts made here. Every refusal is checked to have changed nothing in the target: its
 * status, index, working tree and every file's bytes.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { dbOf } from "../src/lifecycle/db/handle.js";
import { hostName } from "../src/lifecycle/locate.js";
import { rows, useHomes, withStore, type Home } from "./helpers/fixtures.js";
import { dir, git, gitBuf, isolatedRun, scratch, snapshot, sourceRepo, target } from "./helpers/isolated.js";
import { li, liData, until } from "./helpers/li.js";

const home = useHomes({ stopRuns: true });
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const apply = (h: Home, args: string[], cwd: string) => li(["--machine", "job", "apply", ...args], { env: h.env, cwd });

describe("li job diff", () => {
  test("a person gets the header and the patch, --stat the files and totals; --machine pages the patch from byte 0", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const human = await li(["job", "diff", run.id], { env: h.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`run ${run.id}  branch ${run.branch}  ${run.base.slice(0, 12)}..${run.head.slice(0, 12)}  host ${hostName()}`);
    expect(human.stdout).toContain("diff --git a/a.txt b/a.txt");
    expect(human.stdout).toContain("+line two, by the agent");
    expect(human.stdout).not.toContain("\x1b[");
    expect(human.stdout.slice(human.stdout.indexOf("diff --git"))).toBe(run.patch.toString("utf8"));

    const stat = await li(["job", "diff", "--stat", run.id], { env: h.env });
    expect(stat.stdout).toMatch(/ M a\.txt +\| \+1 -1/);
    expect(stat.stdout).toMatch(/ D b\.txt +\| \+0 -1/);
    expect(stat.stdout).toMatch(/ A new\.bin +\| binary/);
    expect(stat.stdout).toContain(" 4 files changed, +2001 -2");
    expect(stat.stdout).not.toContain("diff --git");

    const first = await liData(["job", "diff", run.id], { env: h.env });
    expect(first).toMatchObject({ id: run.id, kind: "invocation", status: "completed", captured: true, patch_from: "store", offset: 0, bytes: 16384, end: 16384, total_bytes: run.patch.length, truncated: true });
    expect(first.change).toMatchObject({ base_sha: run.base, head_sha: run.head, branch: run.branch, insertions: 2001, deletions: 2, truncated: false, patch_bytes: run.patch.length });
    expect(first.change.files.map((f: any) => [f.path, f.status])).toEqual([["a.txt", "modified"], ["b.txt", "deleted"], ["big.txt", "added"], ["new.bin", "added"]]);
    const rest = await liData(["job", "diff", "--offset", String(first.end), "--max-bytes", String(1024 * 1024), run.id], { env: h.env });
    // As li job output's pages: truncated says the page is not all of the patch.
    expect(rest).toMatchObject({ offset: 16384, end: run.patch.length, total_bytes: run.patch.length, truncated: true });
    expect(Buffer.from(first.patch + rest.patch)).toEqual(run.patch);
    const machineStat = await liData(["job", "diff", "--stat", run.id], { env: h.env });
    expect(machineStat.patch).toBeUndefined();
    expect(machineStat.change.files).toHaveLength(4);
  });

  test("a run without --isolate is invalid_input saying so; an isolated run still going answers captured: false", async () => {
    const h = home();
    const { id } = await liData(["agent", "mock/echo", "plain"], { env: h.env });
    const r = await li(["--machine", "job", "diff", id], { env: h.env });
    expect(r.json.error).toMatchObject({ kind: "invalid_input", message: expect.stringContaining("not run with --isolate worktree") });
    // Marked isolated while it starts, its worker may make a worktree of its cwd: a repository made here, never li's own checkout.
    const running = await liData(["agent", "--detach", "mock/sleep:60", "slow"], { env: h.env, cwd: sourceRepo() });
    await withStore(h, async (s) => {
      const e = (await s.get(running.id))!;
      await dbOf(s).run("UPDATE entities SET spec = ? WHERE id = ?", [JSON.stringify({ ...e.spec, isolation: { mode: "worktree" } }), running.id]);
    });
    const d = await li(["--machine", "job", "diff", running.id], { env: h.env });
    expect(d.json.data).toMatchObject({ id: running.id, captured: false, change: null, patch: "", total_bytes: 0 });
    expect(["running", "preparing"]).toContain(d.json.data.status);
    const p = await li(["job", "diff", running.id], { env: h.env });
    expect(p.code).toBe(0);
    expect(p.stderr).toMatch(/its change is captured when it ends/);
    await li(["kill", "--grace", "0", running.id], { env: h.env });
  });

  test("a patch over the store's bound: a note naming the host and branch elsewhere; its own host reads it from git", async () => {
    const h = home();
    const src = sourceRepo();
    const away = await isolatedRun(h, src, { truncated: true, host: "elsewhere" });
    const d = await li(["job", "diff", away.id], { env: h.env });
    expect(d.stdout).toContain(`note: the patch is ${17 * 1024 * 1024} bytes, over the store's 16 MiB bound; branch ${away.branch} on host elsewhere holds all of it: git -C ${src} diff ${away.base} ${away.head}`);
    expect(d.stdout).toMatch(/ M a\.txt/);
    const here = await isolatedRun(h, src, { truncated: true });
    const m = await liData(["job", "diff", "--max-bytes", "16000000", "--offset", "0", here.id], { env: h.env });
    expect(m).toMatchObject({ patch_from: "git", change: { truncated: true } });
    expect(Buffer.from(m.patch)).toEqual(here.patch);
  });

  test("--cumulative spans a resumed chain, first base to last head, made by git on the host holding it", async () => {
    const h = home();
    const src = sourceRepo();
    const one = await isolatedRun(h, src);
    const two = await isolatedRun(h, src, { resumes: one.id, base: one.head, change: (wt) => fs.writeFileSync(path.join(wt, "c.txt"), "sea, then more\n") });
    const cum = await liData(["job", "diff", "--cumulative", "--max-bytes", "16000000", "--offset", "0", two.id], { env: h.env });
    expect(cum.cumulative.runs).toEqual([one.id, two.id]);
    expect(cum.change).toMatchObject({ base_sha: one.base, head_sha: two.head });
    expect(cum.change.files.map((f: any) => f.path)).toEqual(["a.txt", "b.txt", "big.txt", "c.txt", "new.bin"]);
    expect(Buffer.from(cum.patch)).toEqual(gitBuf(src, "diff", "--binary", "--full-index", "-M", one.base, two.head));
    await withStore(h, (s) => dbOf(s).run("UPDATE changes SET host = 'elsewhere' WHERE entity_id IN (?, ?)", [one.id, two.id]));
    const away = await li(["--machine", "job", "diff", "--cumulative", two.id], { env: h.env });
    expect(away.json.error).toMatchObject({ kind: "unavailable", detail: { host: "elsewhere", increments: [one.id, two.id] } });
  });
});

test("a fan-out's session lists each run's change; applying a fan-out names its runs", async () => {
  const h = home();
  const src = sourceRepo();
  const fan = await liData(["o", "fanout", "-n", "2", "--model", "mock/echo", "fan out"], { env: h.env });
  const kids = await withStore(h, (s) => s.children(fan.id));
  expect(kids).toHaveLength(2);
  const one = await isolatedRun(h, src, { id: kids[0].id });
  await withStore(h, async (s) => {
    const e = (await s.get(kids[1].id))!;
    await dbOf(s).run("UPDATE entities SET spec = ? WHERE id = ?", [JSON.stringify({ ...e.spec, isolation: { mode: "worktree" } }), kids[1].id]);
  });
  const d = await liData(["job", "diff", fan.id], { env: h.env });
  expect(d).toMatchObject({ id: fan.id, mode: "fanout" });
  expect(d.runs.map((r: any) => [r.id, r.captured, r.files.length, r.insertions, r.deletions])).toEqual([
    [one.id, true, 4, 2001, 2],
    [kids[1].id, false, 0, 0, 0],
  ]);
  expect((await li(["job", "diff", fan.id], { env: h.env })).stdout).toContain(`fan-out ${fan.id}: the change of each run`);
  const r = await li(["--machine", "job", "apply", "--check", fan.id], { env: h.env, cwd: src });
  expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { runs: [one.id, kids[1].id] } });
});

describe("li job apply", () => {
  test("a change that conflicts is refused, naming the files, and changes nothing; --check says so too; --3way leaves markers", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const t = target(src);
    const a = path.join(t, "a.txt");
    fs.writeFileSync(a, fs.readFileSync(a, "utf8").replace("line 2\n", "line 2, by a person\n"));
    const before = snapshot(t);
    const r = await apply(h, [run.id], t);
    expect(r.json.error).toMatchObject({ kind: "conflict", detail: { reason: "conflict", conflicts: ["a.txt"] } });
    expect(snapshot(t)).toEqual(before);
    const check = await apply(h, ["--check", run.id], t);
    expect(check.json.data).toMatchObject({ applied: false, check: true, would_apply: false, conflicts: ["a.txt"], apply_id: null });
    expect(snapshot(t)).toEqual(before);
    expect(await rows(h, "SELECT * FROM applies")).toEqual([]);

    // --3way needs the touched files to match the index: commit the person's edit first.
    git(t, "commit", "-qam", "a person's edit");
    const merged = await apply(h, ["--3way", run.id], t);
    expect(merged.json.data).toMatchObject({ applied: true, three_way: true, conflicts: ["a.txt"], commit: null });
    expect(fs.readFileSync(a, "utf8")).toMatch(/<<<<<<< ours\nline 2, by a person\n=======\nline two, by the agent\n>>>>>>> theirs/);
    expect(fs.readFileSync(path.join(t, "c.txt"), "utf8")).toBe("sea, staged by a person\n");
    expect(fs.readFileSync(path.join(t, "notes.txt"), "utf8")).toBe("untracked\n");
  });

  test("a clean apply keeps a person's work; --commit makes one commit of exactly the change, naming the run and its prompt", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const t = target(src);
    // a.txt carries a person's unstaged line: --commit refuses rather than commit it, and --check says the same.
    const before = snapshot(t);
    const check = await apply(h, ["--check", "--commit", run.id], t);
    expect(check.json.error).toMatchObject({ kind: "conflict", detail: { reason: "local_changes", paths: ["a.txt"] } });
    const refused = await apply(h, ["--commit", run.id], t);
    expect(refused.json.error).toMatchObject({ kind: "conflict", detail: { reason: "local_changes", paths: ["a.txt"] } });
    expect(snapshot(t)).toEqual(before);

    git(t, "checkout", "--", "a.txt");
    const ok = await apply(h, ["--commit", run.id], t);
    expect(ok.json.data).toMatchObject({ applied: true, check: false, conflicts: [], files: ["a.txt", "b.txt", "big.txt", "new.bin"], repo: fs.realpathSync(path.join(t, ".git")), host: hostName(), onto: run.base });
    const commit = ok.json.data.commit;
    expect(git(t, "rev-parse", "HEAD")).toBe(commit);
    expect(git(t, "log", "-1", "--format=%B")).toMatch(new RegExp(`^make a change\\n\\nApplied by li job apply from run ${run.id}: branch ${run.branch}`));
    expect(gitBuf(t, "diff", "--binary", "--full-index", "-M", "HEAD~1", "HEAD")).toEqual(run.patch);
    // The person's staged and untracked work is as it was.
    expect(git(t, "status", "--porcelain=v1", "--untracked-files=all")).toBe("M  c.txt\n?? notes.txt");
    const ledger = await rows(h, "SELECT * FROM applies");
    expect(ledger).toEqual([expect.objectContaining({ id: ok.json.data.apply_id, entity_id: run.id, status: "applied", commit_sha: commit, onto_sha: run.base, repo: fs.realpathSync(path.join(t, ".git")) })]);
  });

  test("a second apply to the same repository is refused already_applied naming the first; --again applies it once more", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const t = target(src);
    const first = await apply(h, [run.id], t);
    expect(first.json.data).toMatchObject({ applied: true, commit: null });
    expect(fs.readFileSync(path.join(t, "a.txt"), "utf8")).toMatch(/line two, by the agent[^]*an unstaged line of a person's/);
    // A person puts it back; li remembers it was applied here.
    git(t, "checkout", "--", "a.txt", "b.txt");
    fs.rmSync(path.join(t, "big.txt"));
    fs.rmSync(path.join(t, "new.bin"));
    const before = snapshot(t);
    const again = await apply(h, [run.id], t);
    expect(again.json.error).toMatchObject({ kind: "conflict", detail: { reason: "already_applied", first: { id: first.json.data.apply_id } } });
    expect(again.json.error.message).toContain("--again");
    expect(snapshot(t)).toEqual(before);
    const check = await apply(h, ["--check", run.id], t);
    expect(check.json.error.detail.reason).toBe("already_applied");
    const forced = await apply(h, ["--again", run.id], t);
    expect(forced.json.data).toMatchObject({ applied: true });
    expect((await rows(h, "SELECT status FROM applies ORDER BY started_at")).map((r) => r.status)).toEqual(["applied", "applied"]);
  });

  test("a target without the base commit is refused naming it; a truncated change is refused on a host without its branch and applied from git on its own", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const other = dir("unrelated");
    git(other, "init", "-q", "-b", "main");
    fs.writeFileSync(path.join(other, "x"), "x\n");
    git(other, "add", "x");
    git(other, "commit", "-qm", "x");
    const before = snapshot(other);
    const r = await apply(h, [run.id], other);
    expect(r.json.error).toMatchObject({ kind: "not_found", detail: { reason: "base_missing", base_sha: run.base, branch: run.branch } });
    expect(r.json.error.message).toContain(run.base);
    expect(snapshot(other)).toEqual(before);
    const notGit = dir("plain");
    expect((await apply(h, [run.id], notGit)).json.error).toMatchObject({ kind: "invalid_input", detail: { reason: "not_a_work_tree" } });

    const away = await isolatedRun(h, src, { truncated: true, host: "elsewhere" });
    const t = target(src);
    const before2 = snapshot(t);
    const refused = await apply(h, [away.id], t);
    expect(refused.json.error).toMatchObject({ kind: "unavailable", detail: { reason: "truncated", host: "elsewhere", branch: away.branch } });
    expect(snapshot(t)).toEqual(before2);
    await withStore(h, (s) => dbOf(s).run("UPDATE changes SET host = ? WHERE entity_id = ?", [hostName(), away.id]));
    const t2 = target(src, { local: false });
    const ok = await apply(h, [away.id], t2);
    expect(ok.json.data).toMatchObject({ applied: true });
    expect(gitBuf(t2, "diff", "--binary", "--full-index", "-M")).toEqual(gitBuf(src, "diff", "--binary", "--full-index", "-M", away.base, away.head, "--", "a.txt", "b.txt"));
  });

  test("an apply killed half way (an 'applying' row of a dead pid) is settled from the target before the next one", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src);
    const dead = spawnSync(process.execPath, ["-e", "console.log(process.pid)"]).stdout.toString().trim();
    const leftover = async (t: string, id: string) =>
      withStore(h, (s) =>
        dbOf(s).run("INSERT INTO applies (id, entity_id, host, repo, onto_sha, status, pid, started_at) VALUES (?, ?, ?, ?, ?, 'applying', ?, ?)", [
          id,
          run.id,
          hostName(),
          fs.realpathSync(path.join(t, ".git")),
          run.base,
          Number(dead),
          new Date().toISOString(),
        ]),
      );
    // Killed before git wrote: abandoned, and this apply goes on.
    const t = target(src, { local: false });
    await leftover(t, "apply_leftover0001");
    const ok = await apply(h, [run.id], t);
    expect(ok.json.data).toMatchObject({ applied: true, reconciled: [{ apply_id: "apply_leftover0001", to: "abandoned" }] });
    // Killed after git wrote: applied, so this one is refused as a second apply.
    const t2 = target(src, { local: false });
    const file = path.join(scratch, `${run.id}.patch`);
    fs.writeFileSync(file, run.patch);
    git(t2, "apply", file);
    await leftover(t2, "apply_leftover0002");
    const before = snapshot(t2);
    const refused = await apply(h, [run.id], t2);
    expect(refused.json.error).toMatchObject({ kind: "conflict", detail: { reason: "already_applied", first: { id: "apply_leftover0002" } } });
    expect(snapshot(t2)).toEqual(before);
    const ledger = await rows(h, "SELECT id, status FROM applies ORDER BY id");
    expect(ledger).toEqual(expect.arrayContaining([{ id: "apply_leftover0001", status: "abandoned" }, { id: "apply_leftover0002", status: "applied" }]));
  });
});

describe("real isolated runs (li agent and li o fanout with --isolate worktree)", () => {
  test("an agent's change reads back as its branch holds it and applies to a clone with --commit; a fan-out lists its workers' changes; a flow's session holds its one change", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await liData(["agent", "--isolate", "worktree", "mock/edit", "write a.txt rewritten\\n\nwrite fresh.txt new\\n"], { env: h.env, cwd: src });
    const d = await until(async () => {
      const r = await liData(["job", "diff", "--offset", "0", "--max-bytes", "1000000", run.id], { env: h.env });
      return r.captured ? r : null;
    });
    expect(d.change.files.map((f: any) => [f.path, f.status])).toEqual([["a.txt", "modified"], ["fresh.txt", "added"]]);
    expect(Buffer.from(d.patch)).toEqual(gitBuf(src, "diff", "--binary", "--full-index", "-M", d.change.base_sha, d.change.head_sha));
    const t = target(src, { local: false });
    const ok = await li(["--machine", "job", "apply", "--commit", run.id], { env: { ...h.env, GIT_AUTHOR_NAME: "p", GIT_AUTHOR_EMAIL: "p@p", GIT_COMMITTER_NAME: "p", GIT_COMMITTER_EMAIL: "p@p" }, cwd: t });
    expect(ok.json.data).toMatchObject({ applied: true, files: ["a.txt", "fresh.txt"] });
    expect(fs.readFileSync(path.join(t, "fresh.txt"), "utf8")).toBe("new\n");
    expect(git(t, "log", "-1", "--format=%s")).toBe("write a.txt rewritten\\n");

    const fan = await liData(["o", "fanout", "-n", "2", "--model", "mock/edit", "--isolate", "worktree", "worker 1: write one.txt 1\nworker 2: write two.txt 2"], { env: h.env, cwd: src });
    const listed = await until(async () => {
      const r = await liData(["job", "diff", fan.id], { env: h.env });
      return r.runs?.length === 2 && r.runs.every((x: any) => x.captured) ? r : null;
    });
    expect(listed.runs.map((x: any) => x.files.map((f: any) => f.path))).toEqual([["one.txt"], ["two.txt"]]);

    // A flow's steps share the session's worktree: the session holds the one change.
    const plan = path.join(dir("plan"), "plan.json");
    fs.writeFileSync(plan, JSON.stringify({ steps: [{ id: "s1", task: "write f1.txt 1\nend" }, { id: "s2", task: "append c.txt more\nend", depends_on: ["s1"] }] }));
    const flow = await liData(["o", "flow", "--plan-file", plan, "--workers", "mock/edit", "--isolate", "worktree", "go"], { env: h.env, cwd: src });
    const fd = await until(async () => {
      const r = await liData(["job", "diff", "--stat", flow.id], { env: h.env });
      return r.captured ? r : null;
    });
    expect(fd).toMatchObject({ id: flow.id, kind: "session", change: { branch: `li/${flow.id}` } });
    expect(fd.change.files.map((f: any) => f.path)).toEqual(["c.txt", "f1.txt"]);
  });
});
