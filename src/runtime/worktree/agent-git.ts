import fs from "node:fs";
import path from "node:path";
import { gitText, runGit, tryGit } from "./git.js";
import { noteFile } from "./tree-git.js";

/*
 * A sandboxed isolated run's own git (docs/sandbox.md): the person's repository is read-only inside
 * the sandbox, whole, so the agent's git writes go to a place of the run's own, kept in li's home:
 *   common/   a git directory whose objects are the agent's, with the repository's as read-only
 *             alternates; a snapshot of the repository's refs (packed-refs); its config a copy of
 *             the repository's, read-only inside.
 *   gitdir/   mounted over the worktree's git directory (`<common>/worktrees/<name>`) inside the
 *             sandbox: its HEAD and index, and a `commondir` naming common/.
 * Nothing of it is ever read by li as config: at capture li asks git to fetch the agent's tip from
 * it into the repository with every object checked (transfer.fsckObjects, and fetch's
 * connectivity check), and only then moves the run's branch.
 */

export interface AgentGit {
  /** The private common directory (writable inside). */
  common: string;
  /** The private worktree git directory, mounted over `gitDir` inside. */
  gitDir: string;
  /** li's files in `common` that stay read-only inside (they say what the repository is). */
  readOnly: string[];
}

const placeOf = (worktree: string) => noteFile(worktree, "git");

/** What li wrote as packed-refs, to tell later whether the agent changed any ref at all. */
const stampOf = (f: string) => {
  const st = fs.lstatSync(f, { throwIfNoEntry: false });
  return st ? `${st.size}:${st.mtimeMs}:${st.ino}` : "none";
};

/**
 * Builds the run's own git place for the worktree at `worktree` (git directory `gitDir`) of the
 * repository whose common directory is `common`. What an earlier sandbox of the run left there
 * (a resumed run, or one whose capture never ran) is brought in first, so no commit is lost.
 */
export async function prepareAgentGit(o: { root: string; worktree: string; gitDir: string; common: string; branch: string }): Promise<AgentGit> {
  const place = placeOf(o.worktree);
  if (fs.existsSync(place)) await importAgentGit(o.root, o.worktree, o.branch);
  fs.rmSync(place, { recursive: true, force: true });
  const common = path.join(place, "common");
  const gitDir = path.join(place, "gitdir");
  for (const d of ["objects/info", "objects/pack", "refs/heads", "refs/tags", "info"]) fs.mkdirSync(path.join(common, d), { recursive: true, mode: 0o700 });
  fs.mkdirSync(gitDir, { mode: 0o700 });
  fs.writeFileSync(path.join(common, "objects", "info", "alternates"), path.join(o.common, "objects") + "\n");
  fs.copyFileSync(path.join(o.common, "config"), path.join(common, "config"));
  fs.copyFileSync(path.join(o.common, "HEAD"), path.join(common, "HEAD"));
  for (const f of ["info/exclude", "info/attributes"]) if (fs.existsSync(path.join(o.common, f))) fs.copyFileSync(path.join(o.common, f), path.join(common, f));
  // Every ref as it is now, so `git log main` works inside; the agent's own commits write loose refs over them.
  const refs = await gitText(["for-each-ref", "--format=%(objectname) %(refname)"], o.root);
  fs.writeFileSync(path.join(common, "packed-refs"), refs ? refs + "\n" : "");
  for (const f of ["HEAD", "index", "gitdir", "config.worktree"]) if (fs.existsSync(path.join(o.gitDir, f))) fs.copyFileSync(path.join(o.gitDir, f), path.join(gitDir, f));
  fs.writeFileSync(path.join(gitDir, "commondir"), common + "\n");
  fs.writeFileSync(path.join(place, "written"), [stampOf(path.join(common, "packed-refs")), fs.readFileSync(path.join(gitDir, "HEAD"), "utf8")].join("\n"));
  return { common, gitDir, readOnly: ["config", "HEAD", "objects/info/alternates"].map((f) => path.join(common, f)) };
}

/** The first entry under `dir` that is neither a regular file nor a folder (a link, a FIFO), or null. */
function linkIn(dir: string): string | null {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const l = linkIn(p);
      if (l) return l;
    } else if (!e.isFile()) return p;
  }
  return null;
}

/** A file the agent could have replaced: read only if it is a small regular file. */
function readSmall(f: string): string | null {
  try {
    const fd = fs.openSync(f, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const st = fs.fstatSync(fd);
      return st.isFile() && st.size < 4096 ? fs.readFileSync(fd, "utf8") : null;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
}

/**
 * Brings the agent's commits from the run's own git place into the repository at `root`, onto
 * `branch`: fetched by git with every object checked, the branch moved only once they passed.
 * Null when there was nothing to bring or it was brought; else why it was refused (the run's
 * commits stay out; its files are still captured from the worktree).
 */
export async function importAgentGit(root: string, worktree: string, branch: string): Promise<string | null> {
  const place = placeOf(worktree);
  if (!fs.lstatSync(place, { throwIfNoEntry: false })?.isDirectory()) return null;
  const common = path.join(place, "common");
  const head = readSmall(path.join(place, "gitdir", "HEAD"))?.trim() ?? "";
  const [stamp, wroteHead] = (readSmall(path.join(place, "written")) ?? "").split("\n");
  const done = () => (fs.rmSync(place, { recursive: true, force: true }), null);
  // The agent neither committed nor moved HEAD: nothing to bring.
  const loose = path.join(common, "refs", "heads", ...branch.split("/"));
  if (head === wroteHead?.trim() && !fs.lstatSync(loose, { throwIfNoEntry: false }) && stampOf(path.join(common, "packed-refs")) === stamp) return done();
  let want: string;
  if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head)) want = head;
  else if (/^ref: refs\/heads\/[^\s]+$/.test(head) && !head.includes("..")) want = head.slice("ref: ".length);
  else return `its git HEAD is not one li reads (${JSON.stringify(head.slice(0, 80))}); its commits were not taken, its files were`;
  // git reads `commondir` in any git directory: one the agent put in its own would name another repository.
  fs.rmSync(path.join(common, "commondir"), { force: true });
  // git (upload-pack, outside the sandbox) follows a link and reads alternates: a ref, pack or
  // objects folder linked to a repository the sandbox hides, or alternates naming one, would
  // bring that repository's history into the person's. No link is taken, and the alternates are
  // li's again (the agent can move objects/info, whose alternates were read-only, aside).
  const link = linkIn(common);
  if (link) return `its git place holds a link (${path.relative(common, link)}), which git would follow outside it; its commits were not taken, its files were`;
  const info = path.join(common, "objects", "info");
  fs.rmSync(info, { recursive: true, force: true });
  fs.mkdirSync(info, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(info, "alternates"), path.join(await gitText(["rev-parse", "--path-format=absolute", "--git-common-dir"], root), "objects") + "\n");
  const tmp = `refs/li-import/${branch}`;
  const pack = "git -c uploadpack.allowAnySHA1InWant=true -c core.fsmonitor=false -c core.hooksPath=/dev/null upload-pack";
  const checked = ["-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true", "-c", "receive.fsckObjects=true"];
  const f = await tryGit([...checked, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc", "--upload-pack", pack, "--", common, `+${want}:${tmp}`], { cwd: root });
  if (f.code !== 0) {
    await tryGit(["update-ref", "-d", tmp], { cwd: root });
    // An unborn branch the agent never committed to has nothing to bring.
    if (/couldn't find remote ref/.test(f.stderr) && !fs.existsSync(loose)) return done();
    // git's checks refused an object, or git could not write (a full disk): said, never taken half.
    return `its commits did not pass git's checked fetch (${f.stderr.trim().split("\n").slice(-4).join(" | ").slice(-600)}); its commits were not taken, its files were`;
  }
  const tip = String((await tryGit(["rev-parse", "--verify", "-q", `${tmp}^{commit}`], { cwd: root })).stdout).trim();
  if (!tip) {
    await tryGit(["update-ref", "-d", tmp], { cwd: root });
    return "its git HEAD names no commit; its commits were not taken, its files were";
  }
  await runGit(["update-ref", "-m", "li: the agent's commits, checked", `refs/heads/${branch}`, tip], { cwd: root });
  await runGit(["update-ref", "-d", tmp], { cwd: root });
  return done();
}

/** Removes the run's own git place (the worktree is gone, or was never handed to a sandbox). */
export function dropAgentGit(worktree: string): void {
  fs.rmSync(placeOf(worktree), { recursive: true, force: true });
}
