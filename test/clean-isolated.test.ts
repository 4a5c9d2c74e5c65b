/**
 * Issue 36, item 5, black-box: li clean keeps work it cannot get back. A run whose isolated change
 * was never applied, or whose kept worktree holds work its stored change lacks, is kept and named
 * unless --changes; --dry-run names every branch, worktree and stored patch it would remove.
 */
import fs from "node:fs";
import path from "node:path";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";
import { li, liData, tempHome, type Home } from "./helpers/li.js";

const scratch = useNoIdentity();
let h: Home;
beforeEach(() => {
  h = tempHome();
});
afterEach(() => h.cleanup());

const branches = (root: string) =>
  git(root, "branch", "--list", "li/*", "--format=%(refname:short)")
    .split("\n")
    .filter(Boolean)
    .sort();
const isolated = async (root: string, prompt: string, extra: string[] = [], model = "mock/edit") =>
  (await liData(["agent", "--isolate", "worktree", ...extra, model, prompt], { env: h.env, cwd: root })).id as string;
const applyTo = (root: string, id: string) => liData(["job", "apply", id], { env: h.env, cwd: root });
const ids = async () => (await liData(["job", "list"], { env: h.env })).jobs.map((j: any) => j.id).sort();
const clean = (args: string[] = []) => li(["--machine", "clean", ...args], { env: h.env });

test("a change never applied is kept and named unless --changes; an applied or empty one goes with its branch; --dry-run lists branches and patches", async () => {
  const root = makeRepo(scratch(), { "a.txt": "a\n" });
  const unapplied = await isolated(root, "write never.txt kept");
  const applied = await isolated(root, "write used.txt applied");
  const empty = await isolated(root, "hello", [], "mock/echo");
  await applyTo(root, applied);
  const all = [unapplied, applied, empty].sort();
  expect(branches(root)).toEqual(all.map((id) => `li/${id}`).sort());

  const dry = await clean(["--dry-run"]);
  expect(dry.json.data).toMatchObject({ count: 2, kept: { unapplied_change: 1 }, kept_runs: [{ id: unapplied, why: expect.stringContaining("never applied") }] });
  expect(dry.json.data.branches.deleted.sort()).toEqual([`li/${applied}`, `li/${empty}`].sort());
  expect(dry.json.data.removed.flatMap((r: any) => r.patches).map((p: any) => [p.id, p.files, p.applied]).sort()).toEqual(
    [
      [applied, 1, true],
      [empty, 0, false],
    ].sort(),
  );
  const dryHuman = await li(["clean", "--dry-run"], { env: h.env });
  for (const line of [`would delete branch li/${applied}`, `would delete branch li/${empty}`, `would drop the stored patch of ${applied} (1 file(s)`, `kept ${unapplied}: the change of ${unapplied} (1 file) was never applied: li job apply ${unapplied}, or li clean --changes to discard it`])
    expect(dryHuman.stdout).toContain(line);
  // A dry run removed nothing.
  expect(branches(root)).toEqual(all.map((id) => `li/${id}`).sort());
  expect(await ids()).toEqual(all);

  const wet = await clean();
  expect(wet.json.data).toMatchObject({ count: 2, kept: { unapplied_change: 1 } });
  expect(wet.json.data.branches.deleted.sort()).toEqual([`li/${applied}`, `li/${empty}`].sort());
  expect(branches(root)).toEqual([`li/${unapplied}`]);
  expect(await ids()).toEqual([unapplied]);
  expect((await liData(["job", "diff", unapplied, "--stat"], { env: h.env })).change.files).toHaveLength(1);

  // Asked by name, it goes.
  const asked = await clean(["--changes"]);
  expect(asked.json.data).toMatchObject({ count: 1, kept: { unapplied_change: 0 }, branches: { deleted: [`li/${unapplied}`] } });
  expect(branches(root)).toEqual([]);
  expect(await ids()).toEqual([]);
});

test("a kept worktree holding uncommitted work, or commits made after its capture, is kept unless --changes; a clean one goes, and --dry-run names it", async () => {
  const root = makeRepo(scratch(), { "a.txt": "a\n" });
  const tidy = await isolated(root, "write t.txt t", ["--keep-worktree"]);
  const busy = await isolated(root, "write b.txt b", ["--keep-worktree"]);
  for (const id of [tidy, busy]) await applyTo(root, id);
  const worktreeOf = async (id: string) => (await liData(["job", "status", id], { env: h.env })).jobs[0].isolation.worktree as string;
  const [tidyWt, busyWt] = [await worktreeOf(tidy), await worktreeOf(busy)];
  // A person goes on working in the kept worktree after the run.
  fs.writeFileSync(path.join(busyWt, "b.txt"), "b, improved by hand\n");
  fs.writeFileSync(path.join(busyWt, "notes.txt"), "mine\n");

  const dry = await clean(["--dry-run"]);
  expect(dry.json.data).toMatchObject({ count: 1, kept: { worktree_work: 1 }, branches: { deleted: [`li/${tidy}`], worktrees: [tidyWt] } });
  expect(dry.json.data.kept_runs).toEqual([{ id: busy, why: expect.stringContaining(`2 uncommitted paths in its kept worktree ${busyWt}`) }]);
  expect((await li(["clean", "--dry-run"], { env: h.env })).stdout).toContain(`would remove worktree ${tidyWt}`);
  expect(fs.existsSync(tidyWt)).toBe(true);

  const wet = await clean();
  expect(wet.json.data).toMatchObject({ count: 1, kept: { worktree_work: 1 }, branches: { deleted: [`li/${tidy}`], worktrees: [tidyWt] } });
  expect(fs.existsSync(tidyWt)).toBe(false);
  expect(fs.readFileSync(path.join(busyWt, "notes.txt"), "utf8")).toBe("mine\n");

  // Committed, the work is still not in the stored change: still kept.
  git(busyWt, "add", "-A");
  git(busyWt, "commit", "-qm", "by hand");
  const again = await clean();
  expect(again.json.data).toMatchObject({ count: 0, kept_runs: [{ id: busy, why: expect.stringContaining(`commits on li/${busy} made after its change was captured`) }] });
  expect(git(root, "log", "-1", "--format=%s", `li/${busy}`)).toBe("by hand");

  const asked = await clean(["--changes"]);
  expect(asked.json.data).toMatchObject({ count: 1, branches: { deleted: [`li/${busy}`], worktrees: [busyWt] } });
  expect(fs.existsSync(busyWt)).toBe(false);
  expect(branches(root)).toEqual([]);
});
