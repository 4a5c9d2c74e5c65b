import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../errors.js";

/**
 * LI_HOME, else $XDG_STATE_HOME/li, else ~/.local/state/li. A home directory that does not exist
 * (HOME=/nonexistent, as system users have) is refused rather than created under.
 */
export function liHome(): string {
  const explicit = process.env.LI_HOME;
  if (explicit) return path.resolve(explicit);
  if (process.env.XDG_STATE_HOME) return path.join(process.env.XDG_STATE_HOME, "li");
  const home = os.homedir();
  if (!home || !fs.existsSync(home))
    throw new LiError(
      "unavailable",
      `li keeps its state in $LI_HOME, else $XDG_STATE_HOME/li, else ~/.local/state/li: neither variable is set and the home directory ${JSON.stringify(home)} does not exist; set LI_HOME to a directory for li's state`,
      { field: "LI_HOME", home, remedy: "export LI_HOME=/path/to/li-state" },
    );
  return path.join(home, ".local", "state", "li");
}

/** statfs magic numbers of kernel file systems that cannot hold a database (see statfs(2)). */
const VIRTUAL_FS: Record<number, string> = {
  0x9fa0: "proc",
  0x62656572: "sysfs",
  0x64626720: "debugfs",
  0x74726163: "tracefs",
  0x73636673: "securityfs",
  0x27e0eb: "cgroup",
  0x63677270: "cgroup2",
  0x6e736673: "nsfs",
  0xcafe4a11: "bpf",
  0x1cd1: "devpts",
  0x42494e4d: "binfmt_misc",
};
const VIRTUAL_ROOTS = ["/proc", "/sys", "/dev"];

const under = (p: string, root: string) => p === root || p.startsWith(root + "/");

/**
 * LI_HOME, checked before anything is read or made there: a path that is a file, has a file
 * for a parent, or lies on a kernel file system (where mkdir and SQLite misbehave: under /proc
 * a recursive mkdir never returns) is an error naming what is wrong and what to do.
 */
export function checkHome(): string {
  const home = liHome();
  let p = home;
  let st: fs.Stats | undefined;
  for (;;) {
    st = fs.statSync(p, { throwIfNoEntry: false });
    if (st || path.dirname(p) === p) break;
    p = path.dirname(p);
  }
  const detail = { field: "LI_HOME", li_home: home };
  if (st && !st.isDirectory())
    throw new LiError(
      "unavailable",
      p === home
        ? `LI_HOME ${home} is a file, not a directory: set LI_HOME to a directory (li creates it if missing), or move the file away`
        : `LI_HOME ${home} cannot be created: ${p} is a file, not a directory; set LI_HOME to a directory`,
      { ...detail, file: p },
    );
  let real = p;
  try {
    real = fs.realpathSync(p);
  } catch {}
  let type: string | undefined = VIRTUAL_ROOTS.find((r) => under(real, r) || under(home, r))?.slice(1);
  try {
    type ??= VIRTUAL_FS[fs.statfsSync(real).type];
  } catch {}
  if (type)
    throw new LiError("unavailable", `LI_HOME ${home} is on a kernel file system (${type}), which cannot hold li's database: set LI_HOME to a directory on a disk`, {
      ...detail,
      filesystem: type,
    });
  return home;
}

/**
 * When LI_HOME (or the directory li would create it in) cannot be written, the error that says
 * so, in place of what mkdir or SQLite report (ENOENT from a read-only mkdir, "unable to open
 * database file"). Null when it is writable, and the cause lies elsewhere.
 */
export function unwritableHome(cause: unknown): LiError | null {
  let home: string;
  try {
    home = liHome();
  } catch {
    return null;
  }
  let dir = home;
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const probe = path.join(dir, `.li-probe-${process.pid}`);
  try {
    fs.writeFileSync(probe, "");
    fs.rmSync(probe);
    return null;
  } catch (err: any) {
    // A full disk has its own error (storage-faults.ts).
    if (err?.code === "ENOSPC") return null;
    return new LiError("unavailable", `LI_HOME ${home} is not writable (${err?.code ?? err}${dir === home ? "" : ` creating it in ${dir}`}): make it writable by this user, or set LI_HOME to a writable directory`, {
      field: "LI_HOME",
      li_home: home,
      directory: dir,
      cause: String((cause as Error)?.message ?? cause),
    });
  }
}

export function statePath(): string {
  return path.join(liHome(), "state.db");
}

export function runDir(id: string): string {
  return path.join(liHome(), "runs", id);
}

/** Owner-only directory (0700), created with parents. */
export function ensurePrivateDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Owner-only file (0600), written whole through a temp file so readers never see half of it. */
export function writePrivateFile(file: string, data: string | Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
