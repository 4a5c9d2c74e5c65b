import fs from "node:fs";
import path from "node:path";
import { which } from "../on-path.js";

/*
 * A provider CLI too old to take the base URL li gives it would call its default host, unmetered.
 * li refuses to start one below the floor of its supported range (not one exact version: every
 * release since the floor is accepted). The version is its npm package's, found by walking up from
 * the binary on PATH; a CLI that is not an npm package (claude's native install, a wrapper) has no
 * version li can read and is started, since inside the sandbox a call to its default host is
 * refused and recorded by the proxy anyway (docs/gateway.md).
 */

// Each the oldest release seen metered through the gateway (docs/gateway.md#supported-releases
// has the releases tried and how: test/agent-clis-gateway-versions.test.ts).
export const FLOORS: Record<string, { pkg: string; floor: string; what: string }> = {
  claude: { pkg: "@anthropic-ai/claude-code", floor: "1.0.109", what: "ANTHROPIC_BASE_URL and the --include-partial-messages li passes" },
  codex: { pkg: "@openai/codex", floor: "0.20.0", what: "model_providers.<id>.base_url given with -c" },
  gemini: { pkg: "@google/gemini-cli", floor: "0.45.2", what: "GOOGLE_GEMINI_BASE_URL" },
};

function older(a: string, b: string): boolean {
  const x = a.split(/[.-]/).map((n) => parseInt(n, 10) || 0);
  const y = b.split(/[.-]/).map((n) => parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
}

/** The version of `pkg` whose file `bin` is, or null. */
function packageVersion(bin: string, pkg: string): string | null {
  let dir = path.dirname(fs.realpathSync(bin));
  for (let i = 0; i < 6; i++, dir = path.dirname(dir)) {
    try {
      const j = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
      if (j?.name === pkg && typeof j.version === "string") return j.version;
    } catch {}
  }
  return null;
}


/** Why `provider` on the run's PATH cannot be metered (a version below its floor), or null. */
export function belowFloor(provider: string, envPath: string | undefined): string | null {
  const f = FLOORS[provider];
  if (!f) return null;
  const bin = which(provider, envPath);
  if (!bin) return null;
  let version: string | null = null;
  try {
    version = packageVersion(bin, f.pkg);
  } catch {}
  if (!version || !older(version, f.floor)) return null;
  return `${provider} ${version} (${bin}) is older than ${f.floor}, the first release li's gateway supports (it takes ${f.what}); its calls would not be metered: upgrade it (npm install -g ${f.pkg})`;
}
