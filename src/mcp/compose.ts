/*
 * One build's MCP surface: the registry (verbs/index.ts), the CLI's parsers it projects, and the
 * call handler. `li mcp` loads this per build from the bundle on disk, so the schema it projects
 * always belongs to the li it runs, even after an upgrade under a running server.
 */
import { BUILD_ID } from "../build-id.js";
import { Surface } from "./surface.js";

export { BUILD_ID };
export { handleRequest, refuse } from "./call.js";

/** The surface of this build: the composition root's registry over the CLI's parsers. */
export async function createSurface(now?: () => Date): Promise<Surface> {
  // The DI world's entry point: decorators need reflect-metadata before any verb class loads.
  await import("reflect-metadata");
  const { composeRegistry } = await import("../../verbs/index.js");
  const { buildProgram } = await import("../cli/program.js");
  return new Surface(composeRegistry(), () => buildProgram({ machine: true, live: process.stderr }, { all: true }), now);
}

/**
 * The allowlist as plain data (no parser is built): what `li mcp classify` decides by, written
 * beside the bundles at build time so the classifier on every tool call's path loads no DI world.
 */
export async function verbIndex() {
  await import("reflect-metadata");
  const { composeRegistry } = await import("../../verbs/index.js");
  const r = composeRegistry();
  return {
    build_id: BUILD_ID,
    verbs: r.all().map((m) => ({ id: m.id, category: m.category, effects: m.effects, requires_fingerprint: m.requiresFingerprint })),
    declined: r.declinedAll().map((d) => ({ id: d.cliPath.join("."), reason: d.reason })),
    retired: r.synonymsAll(),
  };
}
