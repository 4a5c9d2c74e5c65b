import { fileURLToPath } from "node:url";

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
