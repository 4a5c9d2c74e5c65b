import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { clip } from "./echo.js";
import type { VerbMeta } from "./verb.js";

/**
 * Set on every li the server starts: the directories file arguments (prompt_file, plan_file,
 * body_file) must resolve under, as JSON {"roots": [...], "settings": bool}; with `settings`, the
 * CLI adds the roots of user settings. A person's li, without it, reads what its user can read.
 */
export const FILE_ROOTS_ENV = "LI_MCP_FILE_ROOTS";

export interface FileRootSet {
  roots: string[];
  /** Whether user settings' roots count too (only when the client declares no roots). */
  settings: boolean;
  /** Where the roots came from, for error messages and server.info. */
  source: "client" | "server";
}

export function fileRootsEnv(set: FileRootSet, extra: string[] = []): Record<string, string> {
  return { [FILE_ROOTS_ENV]: JSON.stringify({ roots: [...set.roots, ...extra], settings: set.settings, source: set.source }) };
}

interface RootsClient {
  getClientCapabilities(): { roots?: unknown } | undefined;
  listRoots(params?: undefined, options?: { timeout?: number }): Promise<{ roots: { uri: string }[] }>;
}

/**
 * The client's roots (MCP roots/list) when it declares the capability, else the server's working
 * directory plus user settings. A client that declares roots but cannot list them gets none:
 * the rule fails closed. The list is re-read after notifications/roots/list_changed.
 */
export class ClientRoots {
  private current?: Promise<FileRootSet>;

  constructor(private readonly server: RootsClient) {}

  changed(): void {
    this.current = undefined;
  }

  get(): Promise<FileRootSet> {
    return (this.current ??= this.read());
  }

  private async read(): Promise<FileRootSet> {
    if (!this.server.getClientCapabilities()?.roots) return { roots: [process.cwd()], settings: true, source: "server" };
    try {
      const { roots } = await this.server.listRoots(undefined, { timeout: 5000 });
      return { roots: roots.filter((r) => r.uri.startsWith("file://")).map((r) => fileURLToPath(r.uri)), settings: false, source: "client" };
    } catch {
      this.current = undefined;
      return { roots: [], settings: false, source: "client" };
    }
  }
}

/** `p` after symlinks; a path not there yet is judged by its nearest existing ancestor. */
function realish(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(realish(parent), path.basename(abs));
  }
}

const isUnder = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** The directories an op's args name that `decl` holds to the roots: [parameter, directory]. */
function namedDirs(decl: NonNullable<VerbMeta["withinRoots"]>, args: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = decl.args.filter((a) => typeof args[a] === "string").map((a) => [a, args[a] as string]);
  for (const { arg, flag } of decl.inWords ?? []) {
    const words = args[arg];
    if (!Array.isArray(words)) continue;
    for (let i = 0; i < words.length && words[i] !== "--"; i++) {
      const w = String(words[i]);
      // A flag with no value after it names nothing the CLI would take: it refuses that itself.
      if (w === flag && i + 1 < words.length) out.push([arg, String(words[i + 1])]);
      else if (w.startsWith(`${flag}=`)) out.push([arg, w.slice(flag.length + 1)]);
    }
  }
  return out;
}

/**
 * The first directory argument of an op outside the client's declared roots (judged after
 * symlinks, relative to the server's working directory, as the CLI it starts would resolve it),
 * or null. A client that declares no roots is not held here: the CLI applies the server's rule.
 */
export function outsideClientRoots(decl: VerbMeta["withinRoots"], args: Record<string, unknown>, set: FileRootSet): { param: string; message: string } | null {
  if (!decl || set.source !== "client") return null;
  const roots = set.roots.flatMap((r) => {
    try {
      return [fs.realpathSync(r)];
    } catch {
      return [];
    }
  });
  for (const [param, dir] of namedDirs(decl, args)) {
    if (roots.some((r) => isUnder(realish(dir), r))) continue;
    const within = set.roots.length ? `one of the client's roots: ${set.roots.join(", ")}` : "the client's roots, and it declares none";
    return { param, message: `${param} must name a directory within ${within}; ${JSON.stringify(clip(dir))} is not` };
  }
  return null;
}
