/**
 * A sandboxed isolated run and a git submodule (issue 45; docs/sandbox.md, "The repository: an
 * allow-list"): the submodule's git directories are read-only inside, like the repository's, so a
 * commit inside the submodule is refused, with git's own error to the agent and the refusal on the
 * record, while a commit in the repository itself is taken. Judged in the person's repositories.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { git, makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-submodule.test.ts");

describeSandbox("--sandbox workspace --isolate worktree: a repository with a submodule", () => {
  const homes = useHomes({ stopRuns: true });

  test("a commit inside the submodule is refused (git says the file system is read-only, the refusal is recorded), the repository's own commit is taken, and the submodule's repositories are as they were", async () => {
    const h = homes();
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbsub-")));
    const lib = makeRepo(scratch, { "s.txt": "s\n" }, "lib");
    const repo = makeRepo(scratch, { "a.txt": "a\n" }, "repo");
    git(repo, "branch", "-M", "main");
    git(repo, "submodule", "add", "-q", lib, "sub");
    git(repo, "commit", "-q", "-m", "a submodule");
    const modules = path.join(repo, ".git", "modules", "sub");
    const snapshot = () => ({ head: git(path.join(repo, "sub"), "rev-parse", "HEAD"), refs: git(modules, "for-each-ref"), lib: git(lib, "for-each-ref"), objects: git(modules, "count-objects", "-v") });
    const before = snapshot();

    const lines = [
      "sh cd sub && echo changed > s.txt && git -c user.name=a -c user.email=a@a commit -qam in-the-submodule",
      // Its files as they were, without git (which would refresh the read-only index).
      "sh printf 's\\n' > sub/s.txt",
      "write top.txt top",
      "git-commit in the repository",
    ];
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", lines.join("\n")], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    const out = (await liData(["job", "output", r.id], { env })).output as string;
    // What the agent saw: git's refusal, naming the read-only file system.
    expect(out).toMatch(/sh: refused \(exit 128: .*modules\/sub\/index\.lock.*Read-only file system/);
    expect(out).toContain("git-commit in the repository: ok");
    // On the record, named: a refused write in the submodule's git directory.
    expect(done.sandbox.denials.writes.map((w: any) => w.path)).toEqual(expect.arrayContaining([expect.stringMatching(/\/modules\/sub\/index\.lock$/)]));
    // The repository's commit came in, checked; the submodule's repositories are unchanged.
    await liData(["job", "diff", r.id], { env });
    expect(git(repo, "log", "--format=%s", `li/${r.id}`)).toContain("in the repository");
    expect(git(repo, "show", `li/${r.id}:top.txt`)).toBe("top");
    expect(snapshot()).toEqual(before);
    expect(git(modules, "log", "--all", "--format=%s")).not.toContain("in-the-submodule");
    for (const dir of [repo, modules]) execFileSync("git", ["fsck", "--strict"], { cwd: dir, stdio: "ignore" });
    fs.rmSync(scratch, { recursive: true, force: true });
  }, 120_000);
});
