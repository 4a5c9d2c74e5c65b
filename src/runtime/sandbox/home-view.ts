import fs from "node:fs";
import path from "node:path";
import { homePolicy, type HomePolicyInput, type SandboxHomePolicy } from "../../config/sandbox-home.js";
import { packageRoot } from "../../entrypoints.js";
import { judgeRefresh, MAX_CREDENTIAL_BYTES } from "./token-refresh.js";

/*
 * The worker's side of the home's allow-list (src/config/sandbox-home.ts): the run's private
 * provider state directory, made before bubblewrap starts. Its session directories are made in the
 * person's state directory first (so a session started inside is kept there, and resumed by the
 * next run), its mixed files (claude's `.claude.json`) copied into the run's scratch, never copied
 * back; only a credential file's token refresh goes back (writeBack).
 */

export const homeView = (i: HomePolicyInput): SandboxHomePolicy => homePolicy(i);

export interface PrivateState {
  /** What cleanup removes. */
  root: string;
  /** Bound over the state rule's directory. */
  dir: string;
  /** Where each private copy shows → the copy in the scratch. */
  copies: Record<string, string>;
  /** The person's credential files copied in, with their bytes then: writeBack compares. */
  credentials: { person: string; copy: string; before: Buffer }[];
}

export function prepareState(view: SandboxHomePolicy, scratch: string): PrivateState | null {
  const st = view.state;
  if (!st) return null;
  const root = path.join(scratch, "state");
  const dir = path.join(root, "dir");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The person's own state directory and its session folders: what the CLI would make on its first run.
  if (fs.existsSync(path.dirname(st.dir)))
    for (const f of st.state) if (f.endsWith("/")) fs.mkdirSync(path.join(st.dir, f), { recursive: true, mode: 0o700 });
  const copies: Record<string, string> = {};
  for (const from of st.copies) {
    let text: Buffer;
    try {
      if (!fs.statSync(from).isFile()) continue;
      text = fs.readFileSync(from);
    } catch {
      continue;
    }
    // A copy inside the state directory lands in the private one as it is; one outside it (the home's) is bound.
    const inside = path.relative(st.dir, from);
    const to = !inside.startsWith("..") && !path.isAbsolute(inside) ? path.join(dir, inside) : path.join(root, path.basename(from));
    fs.writeFileSync(to, text, { mode: 0o600 });
    if (to.startsWith(root + "/") && !to.startsWith(dir + "/")) copies[from] = to;
  }
  const credentials: PrivateState["credentials"] = [];
  for (const name of st.credentials) {
    const person = path.join(st.dir, name);
    try {
      if (!fs.lstatSync(person).isFile()) continue;
      const before = fs.readFileSync(person);
      const copy = path.join(dir, name);
      fs.writeFileSync(copy, before, { mode: 0o600 });
      credentials.push({ person, copy, before });
    } catch {
      continue;
    }
  }
  return { root, dir, copies, credentials };
}

/** A refreshed credential that was not written back because it was no refresh (token-refresh.ts): the person's file is untouched. */
export interface CredentialRefusal {
  path: string;
  reason: string;
  detail: string;
}

/**
 * A refreshed token goes back to the person's file (OAuth refresh tokens rotate: the old one is
 * dead once the CLI used it). Only a change judgeRefresh allows (the same account, only token
 * fields changed, under its size cap), only over the bytes the run started from (a newer refresh
 * by another run is kept), written whole to a temporary file beside it, flushed, then renamed over
 * it, so a full disk or a kill -9 leaves the person's file as it was. A change that is no refresh
 * is refused (named, for the run's record); a write that failed is said on `failed`.
 */
export function writeBack(st: PrivateState): { failed: string[]; refused: CredentialRefusal[] } {
  const failed: string[] = [];
  const refused: CredentialRefusal[] = [];
  for (const c of st.credentials) {
    const tmp = `${c.person}.li-${process.pid}`;
    try {
      const now = ownFile(c.copy);
      if (now.equals(c.before)) continue;
      const verdict = judgeRefresh(path.basename(c.person), c.before, now);
      if (!verdict.ok) {
        refused.push({ path: c.person, reason: verdict.reason, detail: verdict.detail });
        continue;
      }
      if (!fs.readFileSync(c.person).equals(c.before)) continue;
      // One a killed worker of the same pid left (never the agent's: the person's directory is not in its sandbox).
      fs.rmSync(tmp, { force: true });
      const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, fs.statSync(c.person).mode & 0o777);
      try {
        fs.writeFileSync(fd, now);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, c.person);
    } catch (err) {
      failed.push(`${c.person}: ${(err as Error).message}`);
      fs.rmSync(tmp, { force: true });
    }
  }
  return { failed, refused };
}

/**
 * The bytes of `file`, a regular file itself: never a link the agent left in its place, which the
 * worker, outside the sandbox, would follow to a file the agent cannot read (another CLI's tokens,
 * a hidden credential) and write back where the next run could read it. One past the size cap is
 * read no further than the cap and one byte (judgeRefresh then refuses it).
 */
function ownFile(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error("not a regular file");
    const buf = Buffer.alloc(Math.min(st.size, MAX_CREDENTIAL_BYTES + 1));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** li's own scripts (the mock providers) and the node that runs them: readable wherever li is installed. */
export function ownPrograms(): string[] {
  return [path.join(packageRoot(), "dist", "bundle"), process.execPath];
}
