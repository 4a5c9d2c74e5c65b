/**
 * Isolated runs (issue 29) seeded for tests until li makes them itself: a run record made by li,
 * its spec marked isolated, and a real change made with git on branch li/<id> and recorded as a
 * capture records it; checkouts to apply it to, and snapshots of everything they hold.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { recordChange } from "../../src/lifecycle/changes/records.js";
import { dbOf } from "../../src/lifecycle/db/handle.js";
import { filesBetween } from "../../src/runtime/changes/patch.js";
import { withStore, type Home } from "./fixtures.js";
import { liData } from "./li.js";

/** Where the repositories go; remove it after the suite. */
export const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "li-apply-"));

export const IDENTITY = ["-c", "user.name=li test", "-c", "user.email=li@test.invalid"];
export const gitBuf = (cwd: string, ...args: string[]) => execFileSync("git", [...IDENTITY, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
export const git = (cwd: string, ...args: string[]) => gitBuf(cwd, ...args).toString("utf8").trim();
let n = 0;
export const dir = (name: string) => fs.mkdtempSync(path.join(scratch, `${name}-${n++}-`));

/** A repository with a few text files, a binary one and a larger one, on branch main. */
export function sourceRepo(): string {
  const src = dir("src");
  git(src, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(src, "a.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  fs.writeFileSync(path.join(src, "b.txt"), "bee\n");
  fs.writeFileSync(path.join(src, "c.txt"), "sea\n");
  fs.writeFileSync(path.join(src, "logo.bin"), Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]));
  git(src, "add", "-A");
  git(src, "commit", "-qm", "base");
  return src;
}

/** The change every seeded run makes: a.txt line 2, a new binary file, b.txt removed, big.txt added (over one page). */
export function edit(wt: string): void {
  const a = path.join(wt, "a.txt");
  fs.writeFileSync(a, fs.readFileSync(a, "utf8").replace("line 2\n", "line two, by the agent\n"));
  fs.writeFileSync(path.join(wt, "new.bin"), Buffer.from([9, 0, 8, 0, 7, 0, 255]));
  fs.rmSync(path.join(wt, "b.txt"));
  fs.writeFileSync(path.join(wt, "big.txt"), Array.from({ length: 2000 }, (_, i) => `big line ${i}`).join("\n") + "\n");
}

export interface Seeded {
  id: string;
  base: string;
  head: string;
  branch: string;
  patch: Buffer;
}

/** A run made by li, marked isolated, with the change `edit` makes on its branch recorded as captured. */
export async function isolatedRun(h: Home, src: string, o: { id?: string; truncated?: boolean; host?: string; resumes?: string; base?: string; change?: (wt: string) => void } = {}): Promise<Seeded> {
  // Run in `src`, as a real isolated run is: its record's cwd is never li's own checkout.
  const id = o.id ?? (await liData(["agent", "mock/echo", "make a change\nand a second line"], { env: h.env, cwd: src })).id;
  const base = o.base ?? git(src, "rev-parse", "HEAD");
  const branch = `li/${id}`;
  const wt = path.join(scratch, `wt-${id}`);
  git(src, "worktree", "add", "-q", "-b", branch, wt, base);
  (o.change ?? edit)(wt);
  git(wt, "add", "-A");
  git(wt, "commit", "-qm", "the agent's change");
  const head = git(wt, "rev-parse", "HEAD");
  const patch = gitBuf(src, "diff", "--binary", "--full-index", "-M", base, head);
  const stat = await filesBetween(src, base, head);
  await withStore(h, async (s) => {
    const e = (await s.get(id))!;
    const isolation = { mode: "worktree", repo: src, rel: "", base: "HEAD", base_sha: base, branch, worktree: wt, carry_changes: false, keep_worktree: false };
    await dbOf(s).run("UPDATE entities SET spec = ? WHERE id = ?", [JSON.stringify({ ...e.spec, isolation, ...(o.resumes ? { resumes: o.resumes } : {}) }), id]);
    const truncated = !!o.truncated;
    await recordChange(s, id, src, { base_sha: base, head_sha: head, branch, ...stat, patch: truncated ? Buffer.alloc(0) : patch, patch_bytes: truncated ? 17 * 1024 * 1024 : patch.length, truncated });
    if (o.host) await dbOf(s).run("UPDATE changes SET host = ? WHERE entity_id = ?", [o.host, id]);
  });
  return { id, base, head, branch, patch };
}

/** A clone of `src` (main only unless `all`), with local work of every kind a person may have. */
export function target(src: string, o: { all?: boolean; local?: boolean } = {}): string {
  const t = dir("target");
  execFileSync("git", ["clone", "-q", "--no-local", ...(o.all ? [] : ["--single-branch", "-b", "main"]), src, t]);
  if (o.local !== false) {
    fs.writeFileSync(path.join(t, "c.txt"), "sea, staged by a person\n");
    git(t, "add", "c.txt");
    fs.appendFileSync(path.join(t, "a.txt"), "an unstaged line of a person's\n");
    fs.writeFileSync(path.join(t, "notes.txt"), "untracked\n");
  }
  return t;
}

/** Everything a checkout holds: status, both diffs, HEAD, and every file's bytes outside .git. */
export function snapshot(t: string) {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.name === ".git") continue;
      if (e.isDirectory()) walk(p);
      else if (e.isSymbolicLink()) files[path.relative(t, p)] = `-> ${fs.readlinkSync(p)}`;
      else files[path.relative(t, p)] = fs.readFileSync(p).toString("base64");
    }
  };
  walk(t);
  // Optional locks off: a status or diff refreshes the index when it can, and looking must not change it.
  return {
    status: gitBuf(t, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all").toString("latin1"),
    diff: gitBuf(t, "--no-optional-locks", "diff", "--binary").toString("latin1"),
    cached: gitBuf(t, "--no-optional-locks", "diff", "--cached", "--binary").toString("latin1"),
    head: git(t, "rev-parse", "HEAD"),
    files,
  };
}

/** A snapshot, and the index and object store too: the entries, the index file's bytes, and every object file's name. */
export function wholeSnapshot(t: string) {
  const objects: string[] = [];
  const walk = (d: string) => fs.readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : objects.push(path.relative(t, path.join(d, e.name)))));
  walk(path.join(t, ".git", "objects"));
  return {
    ...snapshot(t),
    staged: git(t, "ls-files", "-s"),
    index: createHash("sha256").update(fs.readFileSync(path.join(t, ".git", "index"))).digest("hex"),
    objects: objects.sort(),
  };
}

/** Run one makes `dir -> outside` (a plain apply leaves it untracked in the checkout `t`); run two writes dir/x.txt. */
export async function linkedCheckout(h: Home) {
  const src = sourceRepo();
  const outside = dir("outside");
  const one = await isolatedRun(h, src, { change: (wt) => fs.symlinkSync(outside, path.join(wt, "dir")) });
  const two = await isolatedRun(h, src, {
    change: (wt) => {
      fs.mkdirSync(path.join(wt, "dir"));
      fs.writeFileSync(path.join(wt, "dir", "x.txt"), "written by the agent\n");
    },
  });
  return { outside, one, two, t: target(src, { local: false }) };
}
