/**
 * Where playbooks are found: `.li/playbooks/` in the working directory and each parent up to
 * the git root (nearest first), then `$LI_HOME/playbooks/`. Outside a git repository only the
 * working directory's `.li/playbooks/` is project scope, so a stray `.li` higher up (say in
 * the home directory) is never picked up by accident.
 */
import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import { liHome } from "../../lifecycle/paths.js";
import { checkPlaybookName, parsePlaybook, type PlaybookSpec } from "./playbook.js";
import { sha256Hex } from "../../packages.js";

export const PLAYBOOK_SUFFIX = ".playbook.yaml";
export const PLAYBOOK_MAX_BYTES = 1024 * 1024;

export interface ResolvedPlaybook {
  name: string;
  path: string;
  /** "sha256:" + hex of the file's bytes. */
  fingerprint: string;
  spec: PlaybookSpec;
  searched: string[];
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The directories searched, in order of precedence. */
export function playbookDirs(cwd: string): { dir: string; scope: "project" | "user" }[] {
  let start: string;
  try {
    start = fs.realpathSync(cwd);
  } catch {
    start = path.resolve(cwd);
  }
  const chain: string[] = [];
  let gitRoot: string | null = null;
  for (let d = start; ; d = path.dirname(d)) {
    chain.push(d);
    if (fs.existsSync(path.join(d, ".git"))) {
      gitRoot = d;
      break;
    }
    if (path.dirname(d) === d) break;
  }
  const project = (gitRoot ? chain : [start]).map((d) => ({ dir: path.join(d, ".li", "playbooks"), scope: "project" as const }));
  return [...project, { dir: path.join(liHome(), "playbooks"), scope: "user" as const }];
}

export function fingerprintOf(bytes: Buffer): string {
  return "sha256:" + sha256Hex(bytes);
}

function load(name: string, file: string, searched: string[]): ResolvedPlaybook {
  const st = fs.statSync(file);
  if (st.size > PLAYBOOK_MAX_BYTES) throw invalid(`playbook ${name}: ${file} is ${st.size} bytes; the limit is ${PLAYBOOK_MAX_BYTES}`, { playbook: name, path: file });
  const bytes = fs.readFileSync(file);
  return { name, path: file, fingerprint: fingerprintOf(bytes), spec: parsePlaybook(name, bytes.toString("utf8")), searched };
}

export function resolvePlaybook(name: string, cwd: string): ResolvedPlaybook {
  checkPlaybookName(name);
  const dirs = playbookDirs(cwd).map((d) => d.dir);
  for (const dir of dirs) {
    const file = path.join(dir, name + PLAYBOOK_SUFFIX);
    let isFile = false;
    try {
      isFile = fs.statSync(file).isFile();
    } catch {
      isFile = false;
    }
    if (isFile) return load(name, file, dirs);
  }
  throw invalid(`no playbook named ${name}: looked for ${name}${PLAYBOOK_SUFFIX} in ${dirs.join(", ")}`, { playbook: name, searched: dirs });
}

export interface PlaybookListing {
  name: string;
  scope: "project" | "user";
  path: string;
  description: string | null;
  fingerprint: string | null;
  /** Another playbook of the same name earlier in the search order wins. */
  shadowed_by: string | null;
  /** Why it cannot be played, when it cannot. */
  error: string | null;
}

/** Every playbook in every searched directory; a broken one is listed with its error, not hidden. */
export function listPlaybooks(cwd: string): { playbooks: PlaybookListing[]; searched: string[] } {
  const dirs = playbookDirs(cwd);
  const winner = new Map<string, string>();
  const out: PlaybookListing[] = [];
  for (const { dir, scope } of dirs) {
    if (!isDir(dir)) continue;
    for (const file of fs.readdirSync(dir).sort()) {
      if (!file.endsWith(PLAYBOOK_SUFFIX)) continue;
      const name = file.slice(0, -PLAYBOOK_SUFFIX.length);
      const full = path.join(dir, file);
      const entry: PlaybookListing = { name, scope, path: full, description: null, fingerprint: null, shadowed_by: winner.get(name) ?? null, error: null };
      try {
        checkPlaybookName(name);
        const pb = load(name, full, dirs.map((d) => d.dir));
        entry.description = pb.spec.description;
        entry.fingerprint = pb.fingerprint;
      } catch (err: any) {
        entry.error = err?.message ?? String(err);
      }
      if (!winner.has(name)) winner.set(name, full);
      out.push(entry);
    }
  }
  return { playbooks: out, searched: dirs.map((d) => d.dir) };
}
