/*
 * What `li mcp` loads per build (the `mcp-surface` bundle): the MCP surface composed over this
 * build's own CLI parsers. It lives in the CLI layer because it hands the program builder to the
 * MCP layer, which never imports the program itself (that would be an import circle through
 * `li mcp`'s own command). Loaded from the bundle on disk, the schema it projects always belongs
 * to the li it runs, even after an upgrade under a running server.
 */
import { createSurface as compose, BUILD_ID, handleRequest, refuse, verbIndex } from "../mcp/compose.js";
import type { Surface } from "../mcp/surface.js";

export { BUILD_ID, handleRequest, refuse, verbIndex };

export function createSurface(now?: () => Date): Promise<Surface> {
  return compose(async () => (await import("./program.js")).buildProgram({ machine: true, live: process.stderr }, { all: true }), now);
}
