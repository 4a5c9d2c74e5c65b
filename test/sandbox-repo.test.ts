/**
 * The person's repository under --sandbox workspace (issue 45, rows 1, 2, 5 and 9), black-box: the
 * built li runs mock/hostile, whose `sh` line is one shell step as an agent's Bash tool runs it,
 * with the review's own attacks. Each is judged outside, after the run: a marker file a planted
 * command would have made when the person (or li) next ran git, `git fsck`, `git show` in the
 * person's checkout. Never by what the agent said.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { git, makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-repo.test.ts");

describeSandbox("--sandbox workspace: the repository is read-only from inside, whole", () => {
  const homes = useHomes({ stopRuns: true });

  function world(opts: { template?: boolean } = {}) {
    const h = homes();
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-sbr-")));
    const markers = path.join(scratch, "markers");
    fs.mkdirSync(markers);
    // Not writable from inside: a marker there was made by a command that ran outside the sandbox.
    let repo: string;
    if (opts.template) {
      // `git init --template=`: no hooks/, info/ or description.
      repo = path.join(scratch, "repo");
      fs.mkdirSync(repo);
      git(repo, "init", "-q", "--template=");
      fs.writeFileSync(path.join(repo, "a.txt"), "original\n");
      git(repo, "add", "-A");
      git(repo, "commit", "-q", "-m", "base");
    } else repo = makeRepo(scratch, { "a.txt": "original\n" }, "repo");
    git(repo, "branch", "-M", "main");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    return { h, env, repo, markers, scratch };
  }

  const run = async (env: NodeJS.ProcessEnv, repo: string, lines: string[], isolate: boolean) => {
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", ...(isolate ? ["--isolate", "worktree"] : []), "mock/hostile", lines.join("\n")], { env, cwd: repo });
    return { id: r.id as string, done: await terminal(env, r.id, 60_000) };
  };
  const output = async (env: NodeJS.ProcessEnv, id: string) => (await liData(["job", "output", id], { env })).output as string;
  /** What the person runs next in their checkout; its exit code and output, never thrown. */
  const person = (repo: string, ...args: string[]) => {
    try {
      return { code: 0, out: execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
    } catch (e: any) {
      return { code: e.status as number, out: `${e.stdout}${e.stderr}` };
    }
  };
  const markersIn = (dir: string) => fs.readdirSync(dir);

  test("row 1, a checkout run: a commondir naming a directory whose config sets core.fsmonitor is refused, and the person's next git status runs nothing; a git commit there fails", async () => {
    const { env, repo, markers } = world();
    const head = git(repo, "rev-parse", "HEAD");
    const pwned = path.join(markers, "PWNED");
    const attack = `sh G=$PWD/.git; E=$PWD/.cache-x; mkdir -p $E/objects/info $E/refs/heads; cp $G/refs/heads/main $E/refs/heads/; echo $G/objects > $E/objects/info/alternates; printf '[core]\\n\\tfsmonitor = "touch ${pwned}; false"\\n' > $E/config; echo $E > $G/commondir`;
    const { id, done } = await run(env, repo, [attack, "write mine.txt the agent's work", "git-commit on the checkout's branch"], false);
    expect(done).toMatchObject({ status: "completed", isolation: null, sandbox: { mode: "workspace" } });
    expect(fs.existsSync(path.join(repo, ".git", "commondir"))).toBe(false);
    expect(person(repo, "status", "--short").code).toBe(0);
    expect(markersIn(markers)).toEqual([]);
    // The tree is the agent's to write; its .git is not: no commit landed.
    expect(fs.readFileSync(path.join(repo, "mine.txt"), "utf8")).toBe("the agent's work\n");
    expect(git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(await output(env, id)).toContain("git-commit on the checkout's branch: refused");
    expect(person(repo, "fsck", "--strict").code).toBe(0);
  }, 90_000);

  test.each([
    ["an isolated run", true],
    ["a checkout run", false],
  ])("row 2, %s: replacing a loose object of the repository, or deleting its packs, leaves the person's repository as it was", async (_what, isolate) => {
    const { env, repo } = world();
    git(repo, "gc", "-q"); // packed, so objects/pack/* has something to delete
    fs.writeFileSync(path.join(repo, "b.txt"), "loose\n");
    git(repo, "add", "b.txt");
    git(repo, "commit", "-q", "-m", "a loose object");
    const objects = path.join(repo, ".git", "objects");
    // The review's reproduction, first through whatever git says the common directory is, then through the repository's own path.
    const swap = (C: string) =>
      `sh C=${C}; o=$(git rev-parse main:b.txt); n=$(echo EVIL | GIT_OBJECT_DIRECTORY=$TMPDIR/o git hash-object -w --stdin); f=$C/objects/\${o%\${o#??}}/\${o#??}; rm $f; cp $TMPDIR/o/\${n%\${n#??}}/\${n#??} $f`;
    const lines = [
      swap("$(git rev-parse --path-format=absolute --git-common-dir)"),
      swap(path.join(repo, ".git")),
      `sh rm -f ${objects}/pack/*`,
      "write inside.txt the agent's own work",
      "git-commit the agent's commit",
    ];
    const { id, done } = await run(env, repo, lines, isolate);
    expect(done.status).toBe("completed");
    expect(git(repo, "show", "main:b.txt")).toBe("loose");
    expect(git(repo, "show", "main:a.txt")).toBe("original");
    expect(fs.readdirSync(path.join(objects, "pack")).some((f) => f.endsWith(".pack"))).toBe(true);
    expect(person(repo, "fsck", "--strict").code).toBe(0);
    if (isolate) {
      // The agent still commits on its branch: its commit is brought in, checked.
      expect(git(repo, "show", `li/${id}:inside.txt`)).toBe("the agent's own work");
      expect(git(repo, "log", "--format=%s", `li/${id}`)).toContain("the agent's commit");
    }
  }, 90_000);

  test("an isolated run's commits reach the repository only once git has checked them: a malformed commit on its branch is refused, the branch and the object store stay clean", async () => {
    const { h, env, repo } = world();
    // A commit with no author: git's fsck refuses it (missingAuthor), as transfer.fsckObjects does.
    const forge = "sh t=$(git rev-parse HEAD^{tree}); c=$(printf 'tree %s\\n\\nforged\\n' $t | git hash-object -t commit --literally -w --stdin); git update-ref refs/heads/$(git symbolic-ref --short HEAD) $c && echo $c";
    const { id, done } = await run(env, repo, ["write inside.txt work", forge], true);
    expect(done.status).toBe("completed");
    const out = await output(env, id);
    const forged = /sh: ok "([0-9a-f]{40})\\n"/.exec(out)?.[1];
    expect(forged).toBeTruthy();
    expect(person(repo, "cat-file", "-e", forged!).code).not.toBe(0);
    expect(git(repo, "log", "--format=%s", `li/${id}`)).not.toContain("forged");
    expect(person(repo, "fsck", "--strict").code).toBe(0);
    // The record says its commits were not taken; its files were.
    expect(await withStore(h, async (s) => (await s.get(id))?.spec.isolation?.tampered)).toMatch(/did not pass git's checked fetch \(.*(missingAuthor|author)/);
    expect(git(repo, "show", `li/${id}:inside.txt`)).toBe("work");
  }, 90_000);

  test.each([
    ["a checkout run", false],
    ["an isolated run", true],
  ])("row 9, %s in a repository made with --template= : hooks/, info/, packed-refs, worktrees/ and modules/ cannot be created, and none appears on the host", async (_what, isolate) => {
    const { env, repo, markers } = world({ template: true });
    const G = path.join(repo, ".git");
    const hook = `#!/bin/sh\\ntouch ${markers}/HOOK\\n`;
    const lines = [
      `sh mkdir -p ${G}/hooks; printf '${hook}' > ${G}/hooks/pre-commit; chmod +x ${G}/hooks/pre-commit`,
      `sh mkdir -p ${G}/info ${G}/worktrees/x ${G}/modules/x; echo '* filter=x' > ${G}/info/attributes`,
      `sh echo "$(git -C ${repo} rev-parse HEAD) refs/heads/evil" > ${G}/packed-refs`,
    ];
    const { done } = await run(env, repo, lines, isolate);
    expect(done.status).toBe("completed");
    // li's own worktree (isolated) is git's record under worktrees/, made outside the sandbox.
    for (const made of ["hooks", "info", "packed-refs", "modules", ...(isolate ? [] : ["worktrees"])]) expect(fs.existsSync(path.join(G, made))).toBe(false);
    fs.writeFileSync(path.join(repo, "c.txt"), "person\n");
    git(repo, "add", "c.txt");
    expect(person(repo, "commit", "-q", "-m", "the person's commit").code).toBe(0);
    expect(markersIn(markers)).toEqual([]);
    expect(person(repo, "rev-parse", "--verify", "-q", "refs/heads/evil").code).not.toBe(0);
  }, 90_000);

  test.each([
    ["a checkout run", false],
    ["an isolated run", true],
  ])("row 5, %s with extensions.worktreeConfig: config.worktree, .gitattributes filters and textconv, fsmonitor, hooksPath and commondir planted by the agent run nothing, during li's capture and diff or the person's next git", async (_what, isolate) => {
    const { env, repo, markers } = world();
    git(repo, "config", "extensions.worktreeConfig", "true");
    const m = (name: string) => path.join(markers, name);
    const lines = [
      // Through git itself, as the agent would: each lands in whatever config.worktree its git uses.
      `sh git config --worktree core.fsmonitor 'touch ${m("FSMONITOR")}; false'`,
      `sh git config --worktree filter.x.clean 'touch ${m("CLEAN")}; cat'`,
      `sh git config --worktree filter.x.smudge 'touch ${m("SMUDGE")}; cat'`,
      `sh git config --worktree diff.x.textconv 'touch ${m("TEXTCONV")}; cat'`,
      `sh git config --worktree diff.x.command 'touch ${m("DIFFCMD")}; true'`,
      `sh mkdir -p hk && printf '#!/bin/sh\\ntouch ${m("HOOK")}\\n' > hk/post-index-change && chmod +x hk/post-index-change && git config --worktree core.hooksPath $PWD/hk`,
      // And by hand, at the repository's own path.
      `sh printf '[core]\\n\\tfsmonitor = "touch ${m("FSMONITOR2")}; false"\\n' > ${repo}/.git/config.worktree`,
      "sh printf '* filter=x diff=x\\n' > .gitattributes; echo changed > a.txt; echo new > n.txt",
      "git-commit the agent's commit",
      // Last: its git directory names another repository whose config runs a command.
      `sh E=$TMPDIR/evil; mkdir -p $E/objects $E/refs; printf '[core]\\n\\tfsmonitor = "touch ${m("COMMONDIR")}; false"\\n' > $E/config; echo $E > $(git rev-parse --absolute-git-dir)/commondir`,
    ];
    const { id, done } = await run(env, repo, lines, isolate);
    expect(done.status).toBe("completed");
    if (isolate) {
      await liData(["job", "diff", id], { env });
      expect(git(repo, "show", `li/${id}:n.txt`)).toBe("new");
    }
    person(repo, "status");
    person(repo, "diff", "HEAD");
    person(repo, "log", "-p", "-1");
    expect(markersIn(markers)).toEqual([]);
    expect(fs.existsSync(path.join(repo, ".git", "config.worktree"))).toBe(false);
    expect(fs.existsSync(path.join(repo, ".git", "commondir"))).toBe(false);
  }, 90_000);

  test("row 3, an isolated run with --check-cmd \"make test\" whose agent rewrote the Makefile: the check runs in a sandbox over the worktree, so its command writes nothing outside; a check that only reads and writes its worktree still passes", async () => {
    const { env, repo, markers } = world();
    fs.writeFileSync(path.join(repo, "Makefile"), "test:\n\t@echo ok\n");
    git(repo, "add", "Makefile");
    git(repo, "commit", "-q", "-m", "a Makefile");
    const pwned = path.join(markers, "PWNED");
    const evil = `sh printf 'test:\\n\\t@id > ${pwned}\\n' > Makefile`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "--check-cmd", "make test", "mock/hostile", evil], { env, cwd: repo });
    await terminal(env, r.id, 60_000);
    const diff = await liData(["job", "diff", r.id], { env });
    expect(diff.change.check).toMatchObject({ command: "make test", exit_code: 2 });
    // Refused inside: read-only where the host's path shows, absent where the check's /tmp is its own.
    expect(diff.change.check.output_tail).toMatch(/Read-only file system|Directory nonexistent/);
    expect(markersIn(markers)).toEqual([]);
    // The same check on an honest change passes, inside its sandbox.
    const ok = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "--check-cmd", "make test && echo done > made.txt && cat made.txt", "mock/hostile", "write x.txt x"], { env, cwd: repo });
    await terminal(env, ok.id, 60_000);
    expect((await liData(["job", "diff", ok.id], { env })).change.check).toMatchObject({ exit_code: 0, output_tail: "ok\ndone\n" });
  }, 90_000);

  test("kill -9 of an isolated run's worker after its agent committed: the reader that reaps it brings the commit in, checked, and the run's own git place goes with the worktree", async () => {
    const { h, env, repo } = world();
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", "write work.txt committed\ngit-commit before the kill\nwrite done.txt x\nsleep 60"], { env, cwd: repo });
    const running = await until(async () => {
      const j = (await liData(["job", "status", r.id], { env })).jobs[0];
      return j.isolation?.worktree && fs.existsSync(path.join(j.isolation.worktree, "done.txt")) ? j : null;
    }, 60_000);
    // Not yet on the repository's branch: the commit is in the run's own place.
    expect(git(repo, "log", "--format=%s", `li/${r.id}`)).not.toContain("before the kill");
    process.kill(running.pid, "SIGKILL");
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).not.toBe("running");
    await liData(["job", "diff", r.id], { env });
    expect(git(repo, "log", "--format=%s", `li/${r.id}`)).toContain("before the kill");
    expect(git(repo, "show", `li/${r.id}:work.txt`)).toBe("committed");
    expect(person(repo, "fsck", "--strict").code).toBe(0);
    await until(() => !fs.existsSync(running.isolation.worktree), 30_000);
    expect(fs.readdirSync(path.join(h.home, "worktree-notes")).filter((n) => n.endsWith(".git"))).toEqual([]);
  }, 120_000);
});
