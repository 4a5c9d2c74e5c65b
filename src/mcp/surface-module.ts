import type { handleRequest, refuse } from "./call.js";
import type { Surface } from "./surface.js";

/** What one build's `mcp-surface` bundle exports: the server loads it by path, never by import. */
export interface SurfaceModule {
  createSurface(now?: () => Date): Promise<Surface>;
  handleRequest: typeof handleRequest;
  refuse: typeof refuse;
}
