#!/usr/bin/env node
// Installs the real agent CLIs (pinned in agent-clis.json; Qwen Code and opencode as declared ACP agents, issue 50) into a cache folder for
// test/agent-clis-*.test.ts. They are about 1.4 GB together (opencode alone 354 MB: two builds of its binary), so they are not devDependencies.
// The folder is LI_AGENT_CLIS, else ~/.cache/li-agent-clis/<digest of the pins>: a version bump
// lands in a new folder, and a folder whose stamp matches the pins is left alone (a quick no-op).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pinsText = fs.readFileSync(path.join(here, "agent-clis.json"), "utf8");
const pins = JSON.parse(pinsText);
const digest = createHash("sha256").update(pinsText).digest("hex").slice(0, 12);
const dir = process.env.LI_AGENT_CLIS || path.join(os.homedir(), ".cache", "li-agent-clis", digest);
const stamp = path.join(dir, "installed.json");

const installed = (() => {
  try {
    return JSON.parse(fs.readFileSync(stamp, "utf8"));
  } catch {
    return undefined;
  }
})();
if (JSON.stringify(installed) === JSON.stringify(pins)) {
  console.log(`agent CLIs already in ${dir}`);
  process.exit(0);
}

fs.mkdirSync(dir, { recursive: true });
// A package.json of its own keeps npm from walking up into a project; install scripts must run
// (claude-code's postinstall puts its native binary in place).
fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "li-agent-clis", private: true }) + "\n");
const specs = Object.entries(pins).map(([name, version]) => `${name}@${version}`);
console.log(`installing ${specs.join(" ")} into ${dir}`);
execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts=false", ...specs], {
  stdio: "inherit",
  env: { ...process.env, npm_config_engine_strict: "false" },
});
for (const name of Object.keys(pins)) {
  const got = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", name, "package.json"), "utf8")).version;
  if (got !== pins[name]) throw new Error(`${name}: installed ${got}, pinned ${pins[name]}`);
}
// Each must start: claude's binary is put in place by its postinstall, which npm could skip.
for (const bin of ["claude", "codex", "gemini", "qwen", "opencode"]) {
  const out = execFileSync(path.join(dir, "node_modules", ".bin", bin), ["--version"], { encoding: "utf8", timeout: 60000 }).trim();
  console.log(`${bin} ${out}`);
}
fs.writeFileSync(stamp, JSON.stringify(pins) + "\n");
console.log(`agent CLIs installed in ${dir}`);
