/**
 * Issue 36 (items 2, 6, 7): li job apply against a hostile agent's changes, black-box against the
 * built CLI on runs seeded as in test/job-diff-apply.test.ts (helpers/isolated.ts), applied to real
 * checkouts made here. A path the change writes through a symbolic link is refused by every kind of
 * apply and its dry run alike; a dry run changes nothing, index and object store included; applied
 * files and directories get the person's umask, not li's 077.
 */
import fs from "node:fs";
import path from "node:path";
import { useHomes, type Home } from "./helpers/fixtures.js";
import { git, isolatedRun, linkedCheckout, scratch, sourceRepo, target, wholeSnapshot } from "./helpers/isolated.js";
import { li } from "./helpers/li.js";

const home = useHomes();
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const apply = (h: Home, args: string[], cwd: string) => li(["--machine", "job", "apply", ...args], { env: h.env, cwd });

test("a change written through a symbolic link an earlier run left is refused, plain and --3way, real and --check alike, and nothing is written outside", async () => {
  const h = home();
  const { outside, one, two, t } = await linkedCheckout(h);
  const first = await apply(h, [one.id], t);
  expect(first.json.data).toMatchObject({ applied: true });
  expect(fs.readlinkSync(path.join(t, "dir"))).toBe(outside);
  const before = wholeSnapshot(t);
  for (const args of [["--3way"], ["--check", "--3way"], [], ["--check"], ["--3way", "--commit"], ["--commit"]]) {
    const r = await apply(h, [...args, two.id], t);
    expect({ args, error: r.json.error }).toMatchObject({ args, error: { kind: "conflict", detail: { reason: "symlink_in_checkout", paths: ["dir/x.txt"], links: ["dir"] } } });
    expect(r.json.error.message).toContain("nothing was changed");
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(wholeSnapshot(t)).toEqual(before);
  }
});

test("--check --3way changes nothing, byte for byte, index and objects included, where git's own would check a deleted file out; it says what the real --3way does", async () => {
  const h = home();
  const src = sourceRepo();
  const run = await isolatedRun(h, src);
  const t = target(src, { local: false });
  // A person's unstaged deletion of a file the change edits.
  fs.rmSync(path.join(t, "a.txt"));
  const before = wholeSnapshot(t);
  const check = await apply(h, ["--check", "--3way", run.id], t);
  expect(check.json.data).toMatchObject({ check: true, three_way: true, applied: false });
  expect(wholeSnapshot(t)).toEqual(before);
  expect(fs.existsSync(path.join(t, "a.txt"))).toBe(false);
  const real = await apply(h, ["--3way", run.id], t);
  expect(real.json.data?.applied ?? false).toBe(check.json.data.would_apply);
});

test("--check --3way that would leave markers says so and changes nothing; the real --3way leaves them", async () => {
  const h = home();
  const src = sourceRepo();
  const run = await isolatedRun(h, src);
  const t = target(src, { local: false });
  const a = path.join(t, "a.txt");
  fs.writeFileSync(a, fs.readFileSync(a, "utf8").replace("line 2\n", "line 2, by a person\n"));
  git(t, "commit", "-qam", "a person's edit");
  const before = wholeSnapshot(t);
  const check = await apply(h, ["--check", "--3way", run.id], t);
  expect(check.json.data).toMatchObject({ would_apply: true, conflicts: ["a.txt"] });
  expect(wholeSnapshot(t)).toEqual(before);
  const real = await apply(h, ["--3way", run.id], t);
  expect(real.json.data).toMatchObject({ applied: true, conflicts: ["a.txt"] });
});

describe("under a person's umask of 027", () => {
  let was = 0;
  beforeAll(() => (was = process.umask(0o027)));
  afterAll(() => process.umask(was));

  const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
  const nested = (wt: string) => {
    fs.mkdirSync(path.join(wt, "deep", "er"), { recursive: true });
    fs.writeFileSync(path.join(wt, "deep", "er", "n.txt"), "new\n");
    fs.appendFileSync(path.join(wt, "a.txt"), "more\n");
  };

  test("li job apply, with and without --commit, makes files 0640 and directories 0750, as the person's git would", async () => {
    const h = home();
    const src = sourceRepo();
    const run = await isolatedRun(h, src, { change: nested });
    for (const commit of [false, true]) {
      const t = target(src, { local: false });
      expect(mode(path.join(t, "a.txt"))).toBe("640");
      const r = await apply(h, [...(commit ? ["--commit"] : []), run.id], t);
      expect(r.json.data).toMatchObject({ applied: true });
      expect({ commit, modes: ["a.txt", "deep", "deep/er", "deep/er/n.txt"].map((p) => mode(path.join(t, p))) }).toEqual({ commit, modes: ["640", "750", "750", "640"] });
      if (commit) {
        const sha: string = r.json.data.commit;
        expect(mode(path.join(t, ".git", "objects", sha.slice(0, 2), sha.slice(2)))).toBe("440");
      }
    }
  });
});
