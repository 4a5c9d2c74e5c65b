import type { Command } from "../cli/commander.js";
import { fingerprint } from "./fingerprint.js";
import { commandAt, project, ProjectionError, type Projection } from "./projector.js";
import type { VerbRegistry } from "./registry.js";
import type { VerbMeta } from "./verb.js";

export type Projected = { ok: true; projection: Projection; fingerprint: string } | { ok: false; reason: string };

/**
 * The registry plus the CLI's parsers, read in-process for projection only (never executed).
 * The program is built on first need, so connecting to the server stays cheap.
 */
export class Surface {
  private program?: Promise<Command>;
  private readonly cache = new Map<string, Projected>();

  constructor(
    readonly registry: VerbRegistry,
    private readonly loadProgram: () => Promise<Command>,
    readonly now: () => Date = () => new Date(),
  ) {}

  root(): Promise<Command> {
    return (this.program ??= this.loadProgram());
  }

  /** The verb's base command, or why it cannot be offered. */
  async command(meta: VerbMeta): Promise<Command> {
    return commandAt(await this.root(), meta.cliPath);
  }

  async projection(meta: VerbMeta): Promise<Projected> {
    const cached = this.cache.get(meta.id);
    if (cached) return cached;
    let p: Projected;
    try {
      p = this.projectCommand(meta, await this.command(meta));
    } catch (err: any) {
      // Anything else (commander's internals changed shape under the projector) takes down
      // this verb alone, named, never the whole catalog.
      p = { ok: false, reason: err instanceof ProjectionError ? err.message : `the projector failed on this command (${err?.name ?? "Error"}: ${err?.message ?? err})` };
    }
    this.cache.set(meta.id, p);
    return p;
  }

  /** Projects a specific command for the verb (two-stage schemas); throws ProjectionError. */
  projectCommand(meta: VerbMeta, cmd: Command): Projected & { ok: true } {
    // Left out of the schema: flags the server sets itself, and live views meant for a terminal.
    const serverOwned = [...(meta.fixedFlags ?? []), ...(meta.terminalFlags ?? []), ...(meta.artifactFingerprint ? [meta.artifactFingerprint.flag] : [])];
    const projection = project(cmd, serverOwned);
    return { ok: true, projection, fingerprint: fingerprint(projection.schema) };
  }
}
