import fs from "node:fs";
import path from "node:path";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";
import { liData, tempHome, until, type Home } from "./helpers/li.js";
import { connectMcp, type McpSession } from "./helpers/mcp.js";

/*
 * Issue 36: under `li mcp --read-only` a read never runs a command. A read that reaps an ended
 * isolated run records its end but neither captures its change nor runs its check: it says where
 * the change waits, and the next li outside read-only mode (or the host's daemon) finishes it.
 * Black-box: a real MCP client, the built li, a real git repository, a check that leaves a marker.
 */

const scratch = useNoIdentity();
let h: Home;
let mcp: McpSession | undefined;
beforeEach(() => {
  h = tempHome();
});
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  h.cleanup();
});

test("a read-only server's job.status and job.diff reap a run whose worker died before its capture, but capture nothing and run no check; li job status outside read-only mode then does both", async () => {
  const root = makeRepo(scratch(), { "f.txt": "base\n" });
  const base = git(root, "rev-parse", "HEAD");
  const marker = path.join(scratch(), "check-ran");
  // The worker waits between its agent's end and the capture: a kill -9 lands there.
  const env = { ...h.env, LI_TEST_CAPTURE_PAUSE_MS: "60000" };
  const r = await liData(["agent", "--detach", "--isolate", "worktree", "--check-cmd", `touch ${marker}`, "mock/edit", "write f.txt edited"], { env, cwd: root });
  const log = path.join(h.home, "runs", r.id, "worker.log");
  await until(() => fs.existsSync(log) && fs.readFileSync(log, "utf8").includes("capturing its change"), 30000);
  process.kill(r.pid, "SIGKILL");
  const worktree = path.join(h.home, "worktrees", r.id);
  const branchHead = () => git(root, "rev-parse", `li/${r.id}`);

  mcp = await connectMcp(h.env, ["--read-only"]);
  const status = await until(async () => {
    const op = await mcp!.op("job.status", { ids: [r.id] });
    expect(op.ok).toBe(true);
    const j = op.result.jobs[0];
    return j.status === "lost" ? j : null;
  }, 30000);
  // Reaped, and said to wait: where, and why.
  expect(status).toMatchObject({ status: "lost", change: null, change_pending: { reason: "read_only", worktree, host: status.host } });
  expect(status.change_pending.message).toContain(`its worktree ${worktree}`);
  const diff = await mcp.op("job.diff", { id: r.id });
  expect(diff.ok).toBe(true);
  expect(diff.result).toMatchObject({ status: "lost", captured: false, change: null, change_pending: { reason: "read_only", worktree } });
  const waited = await mcp.op("job.wait", { ids: [r.id], max_wait_seconds: 1 });
  expect(waited.ok).toBe(true);
  // Nothing ran and nothing was committed: the check's marker is absent, the branch is at its base,
  // the edit waits uncommitted in the worktree.
  expect(fs.existsSync(marker)).toBe(false);
  expect(branchHead()).toBe(base);
  expect(fs.readFileSync(path.join(worktree, "f.txt"), "utf8")).toBe("edited");
  expect(git(worktree, "status", "--porcelain")).toBe("M f.txt");

  // The next li outside read-only mode, a plain read, captures it and runs its check.
  const after = (await liData(["job", "status", r.id], { env: h.env })).jobs[0];
  expect(after.change_pending).toBeUndefined();
  expect(after.change).toMatchObject({ files: 1, insertions: 1, deletions: 1, check: { exit_code: 0 } });
  expect(fs.existsSync(marker)).toBe(true);
  expect(git(root, "rev-list", "--count", `${base}..li/${r.id}`)).toBe("1");
  expect(git(root, "show", `li/${r.id}:f.txt`)).toBe("edited");
  expect(fs.existsSync(worktree)).toBe(false);
  // Read-only reads see it captured now.
  const seen = await mcp.op("job.diff", { id: r.id, stat: true });
  expect(seen.result).toMatchObject({ captured: true, change: { check: { exit_code: 0 } } });
  expect(seen.result.change_pending).toBeUndefined();
});
