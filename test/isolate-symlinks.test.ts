import fs from "node:fs";
import path from "node:path";
import { git, makeRepo, tree, useNoIdentity, write } from "./helpers/git-repos.js";
import { li, liData, tempHome, type Home } from "./helpers/li.js";

/*
 * Issue 36: a symlink that a repository commits (or an agent makes) decides nothing about where
 * li runs, what it runs or where it writes. Each test replays the attack against real repositories
 * and a sibling "outside" directory made here; mock/edit is the agent.
 */

const scratch = useNoIdentity();
let h: Home;
beforeEach(() => {
  h = tempHome();
});
afterEach(() => h.cleanup());

const status = (id: string) => liData(["job", "status", id], { env: h.env }).then((d) => d.jobs[0]);
const trustFile = () => path.join(h.home, "trust.json");
const readOr = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null);
/** A directory beside the repositories that nothing li does may write to. */
function outside(name: string, files: Record<string, string> = {}): string {
  const dir = path.join(scratch(), name);
  write(dir, files);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
/** Commits a symlink `rel -> target` on the current branch of `root`. */
function commitLink(root: string, rel: string, target: string): void {
  fs.rmSync(path.join(root, rel), { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.symlinkSync(target, path.join(root, rel));
  git(root, "add", "-A", "-f");
  git(root, "commit", "-qm", `link ${rel}`);
}

describe("a project file reached through a symlink borrows no trust", () => {
  test.each([
    ["the settings file is a symlink to a trusted one", ".li/settings.yaml", "../../A/.li/settings.yaml"],
    ["the .li directory is a symlink to a trusted project's", ".li", "../A/.li"],
  ])("%s: B's setup.sh never runs, and li hooks trust refuses the link", async (_what, rel, target) => {
    const dir = fs.mkdtempSync(path.join(scratch(), "borrow-"));
    const out = outside(`out-${path.basename(dir)}`);
    // A's settings are trusted; they run ./setup.sh in a new worktree. Each repository's script says whose it is.
    const A = makeRepo(dir, { ".li/settings.yaml": 'worktree:\n  setup: "sh ./setup.sh"\n', "setup.sh": `echo A >> ${out}/ran\n` }, "A");
    const B = makeRepo(dir, { "setup.sh": `echo B >> ${out}/ran\n` }, "B");
    commitLink(B, rel, target);
    expect(fs.readFileSync(path.join(B, ".li", "settings.yaml"), "utf8")).toContain("sh ./setup.sh");
    expect((await liData(["hooks", "trust"], { env: h.env, cwd: A })).path).toBe(path.join(A, ".li", "settings.yaml"));
    const trusted = fs.readFileSync(trustFile(), "utf8");

    const r = await li(["--machine", "agent", "--isolate", "worktree", "mock/edit", "write x.txt y"], { env: h.env, cwd: B });
    expect(r.json?.ok).toBe(true);
    expect((await status(r.json.data.id)).status).toBe("completed");
    expect(readOr(path.join(out, "ran"))).toBeNull();
    const link = path.join(B, rel);
    expect(r.stderr).toContain(`li: ignoring ${path.join(B, ".li", "settings.yaml")} (its worktree.setup): it is reached through the symlink ${link} (to ${target})`);

    for (const args of [["hooks", "trust"], ["hooks", "trust", path.join(B, ".li", "settings.yaml")], ["hooks", "trust", B]]) {
      const refused = await li(["--machine", ...args], { env: h.env, cwd: B });
      expect(refused.code).not.toBe(0);
      expect(refused.json.error).toMatchObject({ kind: "invalid_input", detail: { reason: "symlinked_project_file", link, target } });
      expect(refused.json.error.message).toContain(`reached through the symlink ${link}`);
      expect(fs.readFileSync(trustFile(), "utf8")).toBe(trusted);
    }

    // A's own trust still holds: its run runs its setup.
    await liData(["agent", "--isolate", "worktree", "mock/edit", "write x.txt y"], { env: h.env, cwd: A });
    expect(readOr(path.join(out, "ran"))).toBe("A\n");
  });
});

test("li hooks trust shows the setup, share and checks commands trusting the file lets run", async () => {
  const root = makeRepo(scratch(), {
    ".li/settings.yaml": 'worktree:\n  setup: "npm ci"\n  share: [node_modules]\nchecks:\n  test: "npm test"\n  lint: "npm run lint"\n',
  });
  const r = await li(["hooks", "trust"], { env: h.env, cwd: root });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("and an isolated run's new worktree runs its setup: npm ci\n");
  expect(r.stdout).toContain("and links the checkout's node_modules into it (share)\n");
  expect(r.stdout).toContain("and its checks run (--check NAME):\n  test: npm test\n  lint: npm run lint");
  const data = await liData(["hooks", "trust"], { env: h.env, cwd: root });
  expect(data).toMatchObject({ worktree: { setup: "npm ci", share: ["node_modules"] }, checks: { test: "npm test", lint: "npm run lint" } });
});

describe("nothing is copied or linked into a worktree through a symlink of its base", () => {
  test.each([
    [".worktreeinclude copies cfg/.env", null],
    ["share links cfg/node_modules", "worktree:\n  share: [cfg/node_modules]\n"],
  ])("%s: with --base pr, where cfg -> outside, the run is refused and outside is untouched", async (_what, settings) => {
    const out = outside(`out-${Math.random().toString(36).slice(2)}`, { ".env": "outside's own\n" });
    const root = makeRepo(scratch(), { ".gitignore": "cfg/\n", ".worktreeinclude": "cfg/.env\n", "a.txt": "a\n" });
    git(root, "checkout", "-q", "-b", "pr");
    commitLink(root, "cfg", out);
    git(root, "checkout", "-q", "main");
    write(root, { "cfg/.env": "SECRET=1\n", "cfg/node_modules/dep.js": "x\n" });
    if (settings) fs.writeFileSync(path.join(h.home, "settings.yaml"), settings);
    const before = tree(out);

    const r = await li(["--machine", "agent", "--isolate", "worktree", "--base", "pr", "mock/edit", "write x.txt y"], { env: h.env, cwd: root });
    const id = r.json?.data?.id ?? r.json?.error?.detail?.id;
    const s = await status(id);
    expect(s).toMatchObject({ status: "failed", reason_code: "invocation.failed.worktree_failed" });
    const console = (await li(["job", "output", id], { env: h.env })).stdout;
    expect(console).toContain(`cfg in the worktree is a symlink (to ${out}), and `);
    expect(tree(out)).toEqual(before);
    expect(fs.readdirSync(out)).toEqual([".env"]);
    expect(fs.existsSync(path.join(h.home, "worktrees", id))).toBe(false);
  });
});

describe("the agent never starts outside its worktree", () => {
  test("run from repo/sub with --base pr, where sub -> outside: refused before any record, naming the link", async () => {
    const out = outside(`out2-${Math.random().toString(36).slice(2)}`);
    const root = makeRepo(scratch(), { "sub/keep.txt": "k\n" });
    git(root, "checkout", "-q", "-b", "pr");
    commitLink(root, "sub", out);
    git(root, "checkout", "-q", "main");
    const r = await li(["--machine", "agent", "--isolate", "worktree", "--base", "pr", "mock/edit", "write x.txt y"], { env: h.env, cwd: path.join(root, "sub") });
    expect(r.code).not.toBe(0);
    expect(r.json.error).toMatchObject({ kind: "invalid_input", detail: { reason: "start_outside_worktree", link: "sub" } });
    expect(r.json.error.message).toMatch(/^sub is a symlink in pr \([0-9a-f]{12}\).*run from a directory that is a directory in that commit/);
    expect(fs.readdirSync(out)).toEqual([]);
    expect((await liData(["job", "list"], { env: h.env })).jobs).toEqual([]);
    expect(git(root, "branch", "--list", "li/*")).toBe("");
  });

  test("a link made on the way after submit (here by the setup command) ends the run failed, naming it; nothing is written outside", async () => {
    const out = outside(`out3-${Math.random().toString(36).slice(2)}`);
    const root = makeRepo(scratch(), { "sub/keep.txt": "k\n" });
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `worktree:\n  setup: "rm -rf sub && ln -s ${out} sub"\n`);
    const r = await li(["--machine", "agent", "--isolate", "worktree", "mock/edit", "write x.txt y"], { env: h.env, cwd: path.join(root, "sub") });
    const id = r.json?.data?.id ?? r.json?.error?.detail?.id;
    const s = await status(id);
    expect(s).toMatchObject({ status: "failed", reason_code: "invocation.failed.worktree_failed" });
    const console = (await li(["job", "output", id], { env: h.env })).stdout;
    expect(console).toContain(`but sub there is a symlink (to ${out}), so li does not start it there`);
    expect(fs.readdirSync(out)).toEqual([]);
  });
});
