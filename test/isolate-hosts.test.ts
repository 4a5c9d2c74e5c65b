/**
 * Isolated runs across hosts (issue 29, section 4): a laptop and gpu1 on one PostgreSQL store,
 * gpu1 running `li host run`. A run placed on gpu1 makes its worktree from gpu1's checkout at the
 * cwd's path; its change reaches the store, so the laptop reads it and applies it to a checkout of
 * its own, once. A --base gpu1's checkout lacks ends the run failed base_missing, naming the
 * commit and the host; li never fetches.
 */
import fs from "node:fs";
import path from "node:path";
import { terminal } from "./helpers/fixtures.js";
import { git, makeRepo, tree, useNoIdentity } from "./helpers/git-repos.js";
import { startDaemon, useSharedStore } from "./helpers/hosts.js";
import { li, liData } from "./helpers/li.js";
import { describePostgres } from "./helpers/postgres.js";

const scratch = useNoIdentity();

describePostgres("isolated runs placed on another host", () => {
  const store = useSharedStore(["laptop", "gpu1"]);
  const [laptop, gpu1] = store.homes;

  beforeAll(() => {
    startDaemon(gpu1);
  });

  test("a run placed on gpu1 works in a worktree of gpu1's checkout; the laptop reads its diff and applies it to its own checkout once", async () => {
    const origin = makeRepo(scratch(), { "f.txt": "base\n", "g.txt": "g\n" }, "gpu1-checkout");
    const mine = path.join(scratch(), "laptop-checkout");
    git(scratch(), "clone", "-q", origin, mine);
    // The person applying has an identity in their checkout; li's own capture commits need none.
    git(mine, "config", "user.name", "Laptop Person");
    git(mine, "config", "user.email", "person@laptop");
    const before = tree(origin);
    const run = await liData(["agent", "--host", "gpu1", "--allow-new-host", "--isolate", "worktree", "mock/edit", "write f.txt from gpu1\\n\nappend g.txt more\\n"], {
      env: laptop.env,
      cwd: origin,
    });
    const done = await terminal(laptop.env, run.id, 60_000);
    expect(done).toMatchObject({ status: "completed", host: "gpu1" });
    // The worktree was gpu1's, and is gone; the checkout itself never changed.
    expect(fs.readdirSync(path.join(gpu1.home, "worktrees")).filter((n) => !n.includes("."))).toEqual([]);
    expect(fs.existsSync(path.join(laptop.home, "worktrees"))).toBe(false);
    expect(tree(origin)).toEqual(before);

    // From the laptop, through the store.
    const diff = await liData(["job", "diff", run.id], { env: laptop.env });
    expect(diff).toMatchObject({ id: run.id, host: "gpu1", captured: true, change: { branch: `li/${run.id}`, truncated: false } });
    expect(diff.change.files.map((f: any) => [f.path, f.status, f.insertions, f.deletions])).toEqual([
      ["f.txt", "modified", 1, 1],
      ["g.txt", "modified", 1, 0],
    ]);
    expect(diff.patch).toContain("+from gpu1");

    const applied = await liData(["job", "apply", run.id, "--commit"], { env: laptop.env, cwd: mine });
    expect(applied).toMatchObject({ applied: true, host: "laptop" });
    expect(fs.readFileSync(path.join(mine, "f.txt"), "utf8")).toBe("from gpu1\n");
    expect(git(mine, "log", "-1", "--format=%B")).toContain(run.id);
    expect(git(mine, "status", "--porcelain")).toBe("");

    // Recorded once: a second apply from the laptop is refused, naming the first.
    const again = await li(["--machine", "job", "apply", run.id], { env: laptop.env, cwd: mine });
    expect(again.json.error).toMatchObject({ kind: "conflict", detail: { reason: "already_applied" } });
    expect(git(mine, "status", "--porcelain")).toBe("");
    // Every host reads the one record of it: when, on which host, in which repository, onto which HEAD.
    for (const h of [laptop, gpu1]) {
      const seen = await liData(["job", "diff", run.id, "--stat"], { env: h.env });
      expect(seen.applies).toEqual([
        expect.objectContaining({ host: "laptop", repo: fs.realpathSync(path.join(mine, ".git")), onto_sha: applied.onto, commit_sha: applied.commit, applied_at: expect.any(String) }),
      ]);
    }
  });

  test("a --base that gpu1's checkout lacks ends the run failed base_missing, naming the commit and the host; nothing is fetched", async () => {
    const origin = makeRepo(scratch(), { "f.txt": "base\n" }, "gpu1-only");
    const other = path.join(scratch(), "elsewhere");
    git(scratch(), "clone", "-q", origin, other);
    fs.writeFileSync(path.join(other, "f.txt"), "newer\n");
    git(other, "commit", "-qam", "a commit only the laptop's clone has");
    const sha = git(other, "rev-parse", "HEAD");
    const run = await liData(["agent", "--host", "gpu1", "--allow-new-host", "--isolate", "worktree", "--base", sha, "mock/edit", "write x.txt 1"], { env: laptop.env, cwd: origin });
    const done = await terminal(laptop.env, run.id, 60_000);
    expect(done).toMatchObject({ status: "failed", reason_code: "invocation.failed.base_missing", host: "gpu1" });
    const events = await liData(["state", "events", run.id], { env: laptop.env });
    const failed = events.events.find((e: any) => e.to_status === "failed");
    expect(failed.detail).toMatchObject({ base_sha: sha, host: "gpu1" });
    expect(failed.detail.error).toContain(`does not have commit ${sha}`);
    expect(() => git(origin, "cat-file", "-e", `${sha}^{commit}`)).toThrow();
    expect(git(origin, "branch", "--list", "li/*")).toBe("");
  });
});
