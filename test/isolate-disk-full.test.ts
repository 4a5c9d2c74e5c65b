/**
 * Issue 36: an isolated run whose end meets a full disk under LI_HOME. Its change stays in its
 * worktree and is captured whole once space is back; meanwhile the foreground li agent says why
 * it exits 1, and li job diff says where the change waits, not only `captured: false`.
 * Black-box, LI_HOME on a small tmpfs filled to the last block (needs root; skipped elsewhere).
 */
import fs from "node:fs";
import path from "node:path";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";
import { li, until } from "./helpers/li.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

const tiny = useTinyFs(8 * 1024 * 1024);
const onTiny = tinyFsTest(tiny);
const scratch = useNoIdentity();
afterEach(() => tiny.free());

onTiny("the disk fills while an isolated run works: li agent says why it exits 1, li job diff says where the change waits, and the change is captured whole once space is back", async () => {
  // A short retry window, so that the worker gives its end up to end.json within the test.
  const h = tiny.home({ LI_WORKER_RETRY_SECONDS: "1" });
  fs.mkdirSync(h.home, { recursive: true, mode: 0o700 });
  const root = makeRepo(scratch(), { "f.txt": "base\n" });
  const base = git(root, "rev-parse", "HEAD");
  const foreground = li(["agent", "--isolate", "worktree", "mock/edit", "write f.txt edited\nsleep 3"], { env: h.env, cwd: root });
  const runs = path.join(h.home, "runs");
  // The agent has made its edit (in the worktree, on the tmpfs): now the disk fills.
  const id = (await until(() => {
    const [first] = fs.existsSync(runs) ? fs.readdirSync(runs) : [];
    const log = first ? path.join(runs, first, "console.log") : "";
    return log && fs.existsSync(log) && fs.readFileSync(log, "utf8").includes("edit: write f.txt") ? first : undefined;
  }, 30000)) as string;
  tiny.fill();
  const worktree = path.join(h.home, "worktrees", id);

  const fg = await foreground;
  expect(fg.code).toBe(1);
  expect(fg.stderr).toContain(`li: ${id}: its process is gone but its end could not be recorded: the disk holding LI_HOME (${h.home}) is full`);
  expect(fg.stderr).toContain(`its change waits in its worktree ${worktree}`);

  const full = await li(["--machine", "job", "diff", id], { env: h.env, cwd: root });
  expect(full.code).toBe(0);
  expect(full.json.data).toMatchObject({ status: "running", captured: false, change: null, change_pending: { reason: "end_not_recorded", worktree } });
  expect(full.json.data.change_pending.message).toContain(`the disk holding LI_HOME (${h.home}) is full`);
  const person = await li(["job", "diff", id], { env: h.env, cwd: root });
  expect(person.code).toBe(0);
  expect(person.stderr).toContain(`its change waits in its worktree ${worktree}`);
  // Safe where it was said to be: in the worktree, not yet on the branch.
  expect(fs.readFileSync(path.join(worktree, "f.txt"), "utf8")).toBe("edited");
  expect(git(root, "rev-parse", `li/${id}`)).toBe(base);

  tiny.free();
  const back = await li(["--machine", "job", "diff", id], { env: h.env, cwd: root });
  expect(back.json?.data).toMatchObject({ status: "completed", captured: true, change: { files: [{ path: "f.txt", status: "modified", insertions: 1, deletions: 1 }] } });
  expect(back.json.data.change_pending).toBeUndefined();
  expect(back.json.data.patch).toContain("+edited");
  expect(git(root, "show", `li/${id}:f.txt`)).toBe("edited");
  expect(fs.existsSync(worktree)).toBe(false);
});
