import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "./entrypoints.js";

declare const __LI_BUILD_ID__: string | undefined;

/** The build this code came from: stamped into the bundle by scripts/bundle.mjs ("source" when unbundled). */
export const BUILD_ID: string = typeof __LI_BUILD_ID__ === "string" ? __LI_BUILD_ID__ : "source";

/** The file the build writes its id to, beside the bundle: what a new process would run. */
export const buildIdFile = (): string => path.join(packageRoot(), "dist", "bundle", "build-id");

/** The id of the build on disk now (null when there is none), read fresh on every call. */
export function installedBuildId(): string | null {
  try {
    return fs.readFileSync(buildIdFile(), "utf8").trim() || null;
  } catch {
    return null;
  }
}
