import fs from "node:fs";
import path from "node:path";
import { runGit } from "./git.js";

/*
 * A checkout that changed while an isolated run ran (an agent that wrote to it by absolute path,
 * say) is noted on the run as source_changed. The worker records the checkout's dirty paths with
 * their content hashes before the agent starts (source-before.json in the run's directory); the
 * capture compares them with the checkout as it is then. A path that was clean and stayed clean
 * costs nothing, so this reads only what differs from HEAD. Changes made by a person at the same
 * time are noted too: the note says the checkout changed, not who changed it.
 */

const FILE = "source-before.json";
/** Past this many dirty paths, only which paths are dirty is compared, not their contents. */
const HASH_LIMIT = 5000;
/** The most paths a note lists. */
const NOTE_LIMIT = 200;

type State = Record<string, string>;

async function stateOf(root: string): Promise<State> {
  const { stdout } = await runGit(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"], { cwd: root, env: { GIT_OPTIONAL_LOCKS: "0" } });
  const paths = stdout
    .split("\0")
    .filter((f) => f.length > 3)
    .map((f) => ({ xy: f.slice(0, 2), p: f.slice(3) }));
  const out: State = {};
  const hashable = paths.length <= HASH_LIMIT ? paths.filter(({ p }) => fs.statSync(path.join(root, p), { throwIfNoEntry: false })?.isFile()) : [];
  const hashes = hashable.length
    ? (await runGit(["hash-object", "--no-filters", "--stdin-paths"], { cwd: root, input: hashable.map(({ p }) => p).join("\n") + "\n" })).stdout.trim().split("\n")
    : [];
  for (const { xy, p } of paths) out[p] = xy;
  hashable.forEach(({ p }, i) => (out[p] += ":" + (hashes[i] ?? "")));
  return out;
}

/** Records the checkout's state before the agent starts. Best effort: without it, nothing is noted. */
export async function noteSourceBefore(root: string, runDir: string): Promise<void> {
  try {
    fs.writeFileSync(path.join(runDir, FILE), JSON.stringify(await stateOf(root)), { mode: 0o600 });
  } catch {}
}

/** The checkout's paths that differ from what was recorded before the agent started; null when nothing was recorded. */
export async function sourceChanged(root: string, runDir: string | null): Promise<string[] | null> {
  if (!runDir) return null;
  let before: State;
  try {
    before = JSON.parse(fs.readFileSync(path.join(runDir, FILE), "utf8"));
  } catch {
    return null;
  }
  const after = await stateOf(root);
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((p) => before[p] !== after[p]).sort();
  return changed.slice(0, NOTE_LIMIT);
}
