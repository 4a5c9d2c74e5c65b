import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** LI_HOME, else $XDG_STATE_HOME/li, else ~/.local/state/li. */
export function liHome(): string {
  const explicit = process.env.LI_HOME;
  if (explicit) return path.resolve(explicit);
  const xdg = process.env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state");
  return path.join(xdg, "li");
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
