/**
 * Played as a determined agent in an isolated run under --sandbox workspace: its commits go to a
 * git place of its own, which li fetches from at capture, outside the sandbox, as the person. That
 * place is the agent's to write: it moved `objects/info` aside (the read-only alternates file
 * went with it), wrote alternates naming a repository the sandbox hides, and made its branch's
 * loose ref a link to that repository's branch. li's fetch must not carry the hidden repository's
 * history into the person's: judged in the person's repository with git.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { git, makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes, useScratches, withStore } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-attack-git-place.test.ts");

describeSandbox("an isolated run's own git place", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-place-");

  test("alternates and a branch linked to a repository the sandbox hides: its history never reaches the person's repository", async () => {
    const h = homes();
    const scratch = scratchDir();
    const home = path.join(scratch, "person");
    const secret = makeRepo(home, { "plan.txt": "TOP SECRET\n" }, "secret");
    const secretTip = git(secret, "rev-parse", "HEAD").trim();
    const secretRef = git(secret, "symbolic-ref", "HEAD").trim();
    const repo = makeRepo(scratch, { "a.txt": "a\n" }, "repo");
    const env = { ...h.env, HOME: home, LI_TEST_HOSTILE_MOCK: "1" };
    const step = [
      'C=$(git rev-parse --path-format=absolute --git-common-dir); B=$(git symbolic-ref HEAD)',
      `cat "${secret}/.git/HEAD" >/dev/null 2>&1 || echo hidden-inside`,
      'mv "$C/objects/info" "$C/objects/info-aside" && mkdir "$C/objects/info" && echo moved',
      `echo "${secret}/.git/objects" > "$C/objects/info/alternates"`,
      `mkdir -p "$(dirname "$C/$B")" && ln -sf "${secret}/.git/${secretRef}" "$C/$B" && echo linked`,
    ].join("; ");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "mock/hostile", `sh ${step}`], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    const out = (await liData(["job", "output", r.id], { env })).output as string;
    expect(out).toContain("hidden-inside");
    expect(out).toContain("moved");
    expect(out).toContain("linked");
    // The person's repository has no object of the hidden one, on li's branch or anywhere.
    const has = (sha: string) => {
      try {
        execFileSync("git", ["cat-file", "-e", sha], { cwd: repo, stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    };
    expect(has(secretTip)).toBe(false);
    // Refused on the record, saying why (once the change is captured).
    await liData(["job", "diff", r.id], { env });
    expect(await withStore(h, async (s) => (await s.get(r.id))?.spec.isolation?.tampered)).toContain("holds a link");
  }, 90_000);
});
