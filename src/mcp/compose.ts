/*
 * One build's MCP surface: the registry (verbs/index.ts), the CLI's parsers it projects, and the
 * call handler. The parsers come from the caller (`src/cli/mcp-surface.ts`, the bundle `li mcp`
 * loads per build), so the MCP layer never imports the CLI program that starts it.
 */
import { BUILD_ID } from "../build-id.js";
import type { Command } from "../cli/commander.js";
import { Surface } from "./surface.js";

export { BUILD_ID };
export { handleRequest, refuse } from "./call.js";

/** The surface of this build: the composition root's registry over the parsers `loadProgram` builds. */
export async function createSurface(loadProgram: () => Promise<Command>, now?: () => Date): Promise<Surface> {
  // The DI world's entry point: decorators need reflect-metadata before any verb class loads.
  await import("reflect-metadata");
  const { composeRegistry } = await import("../../verbs/index.js");
  return new Surface(composeRegistry(), loadProgram, now);
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
