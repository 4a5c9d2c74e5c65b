import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { finishHold, startHold } from "../src/runtime/sandbox/held.js";
import { holdJournal } from "../src/lifecycle/sandbox-held.js";
import { git, makeRepo, useNoIdentity } from "./helpers/git-repos.js";

/*
 * The hold of a checkout run's created files that run code (src/runtime/sandbox/held.ts), on its
 * own: what the worker and a reaper both call. The black-box kill -9 case is in
 * sandbox-code-files.test.ts; here the parts a sandbox cannot show cheaply: a run directory on
 * another file system than the tree, a hold repeated, one li cannot complete, a journal not li's.
 */

const scratch = useNoIdentity();

function world(treeParent = scratch()) {
  const repo = makeRepo(fs.mkdtempSync(path.join(treeParent, "li-held-")), { ".envrc": "mine\n", "a.txt": "a\n" }, "repo");
  const runDir = fs.mkdtempSync(path.join(scratch(), "run-"));
  fs.mkdirSync(path.join(runDir, "sandbox"));
  return { repo, runDir, held: path.join(runDir, "sandbox", "held") };
}

/** What an agent leaves: a file, a folder at depth, and a link out of the tree. */
function agentWrites(repo: string): void {
  fs.mkdirSync(path.join(repo, "pkg", ".vscode"), { recursive: true });
  fs.writeFileSync(path.join(repo, "pkg", ".vscode", "tasks.json"), "{}\n");
  fs.writeFileSync(path.join(repo, ".npmrc"), "x=1\n");
  fs.symlinkSync("/etc/hostname", path.join(repo, ".mcp.json"));
  fs.writeFileSync(path.join(repo, "plain.txt"), "p\n");
}

const onOtherDevice = (() => {
  try {
    return fs.statSync("/dev/shm").dev !== fs.statSync(os.tmpdir()).dev ? "/dev/shm" : null;
  } catch {
    return null;
  }
})();

if (!onOtherDevice) console.warn("sandbox-held.test.ts: /dev/shm is on the same file system as the temporary directory here; the move across file systems is not tried");
const cases: [string, string | null][] = [["on the tree's file system", null], ...(onOtherDevice ? [["on another file system than the tree (copied, then removed)", onOtherDevice] as [string, string]] : [])];

test.each(cases)("the run directory %s: only what the agent created moves, a link as a link; the names are read back from held/, so a second hold names the same", (_what, other) => {
  const w = world(other ?? undefined);
  try {
    expect(startHold(w.runDir, w.repo, true)).toEqual([path.join(w.repo, ".envrc")]);
    expect(fs.existsSync(holdJournal(w.runDir))).toBe(true);
    agentWrites(w.repo);
    const names = [".mcp.json", ".npmrc", "pkg/.vscode"];
    expect(finishHold(w.runDir)).toEqual({ held: names, unheld: [] });
    for (const n of names) expect(fs.lstatSync(path.join(w.repo, n), { throwIfNoEntry: false })).toBeUndefined();
    expect(fs.readlinkSync(path.join(w.held, ".mcp.json"))).toBe("/etc/hostname");
    expect(fs.readFileSync(path.join(w.held, "pkg", ".vscode", "tasks.json"), "utf8")).toBe("{}\n");
    expect(fs.readFileSync(path.join(w.repo, ".envrc"), "utf8")).toBe("mine\n");
    expect(git(w.repo, "status", "--porcelain")).toBe("?? plain.txt");
    // Repeated (a reaper after one killed mid-move): nothing more moves, every name stays.
    expect(finishHold(w.runDir)).toEqual({ held: names, unheld: [] });
  } finally {
    fs.rmSync(path.dirname(w.repo), { recursive: true, force: true });
  }
});

test("a file li cannot move stays in the tree and is named unheld; a journal that is not li's holds nothing", () => {
  const w = world();
  startHold(w.runDir, w.repo, true);
  agentWrites(w.repo);
  // held/ cannot be made: each file stays where it is, named.
  fs.writeFileSync(w.held, "not a folder");
  expect(finishHold(w.runDir)).toEqual({ held: [], unheld: [".mcp.json", ".npmrc", "pkg/.vscode"] });
  expect(fs.existsSync(path.join(w.repo, ".npmrc"))).toBe(true);
  fs.writeFileSync(holdJournal(w.runDir), JSON.stringify({ tree: "relative/path", git: true, before: [] }));
  expect(finishHold(w.runDir)).toBeNull();
  fs.rmSync(holdJournal(w.runDir));
  expect(finishHold(w.runDir)).toBeNull();
});
