import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Settings } from "../config/settings.js";
import { homePolicy } from "../config/sandbox-home.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's upgrading note for the home's allow-list (issue 45, docs/sandbox.md#upgrading): what
 * in this person's home a workspace run used to read and no longer sees, and the settings line
 * that shows it again. A warning, never a failure: nothing is broken until an agent needs it.
 */

/** Toolchain folders that live outside PATH's prefixes, with what they hold. */
const TOOL_HOMES: [string, string | null, string][] = [
  [".rustup", "RUSTUP_HOME", "rustup's toolchains, for cargo and rustc"],
  ["go/pkg/mod", "GOMODCACHE", "go's module cache"],
  [".m2", null, "maven's repository"],
  [".gradle", null, "gradle's caches"],
  [".sdkman", null, "sdkman's JDKs"],
  [".deno", "DENO_DIR", "deno's cache"],
];

/** Files ~/.gitconfig includes (include.path, includeIf.*.path), as absolute paths. */
function gitIncludes(home: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home, ".gitconfig"), "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  let inInclude = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const section = /^\[\s*(include|includeIf)\b/i.exec(line);
    if (line.startsWith("[")) inInclude = !!section;
    const m = /^path\s*=\s*"?([^"]+?)"?\s*$/i.exec(line);
    if (inInclude && m) out.push(m[1].startsWith("~/") ? path.join(home, m[1].slice(2)) : path.resolve(home, m[1]));
  }
  return out;
}

export function sandboxHomeWarnings(settings: Settings | null, env: NodeJS.ProcessEnv = process.env): Check[] {
  if (!settings) return [];
  const home = env.HOME || os.homedir();
  const view = homePolicy({ home, tree: path.join(home, ".li-doctor-no-tree"), provider: "", env, settings: settings.sandbox });
  if (!view.hideHome) return [];
  const shown = (p: string) => view.readOnly.some((s) => p === s.path || p.startsWith(s.path + "/"));
  const missing: string[] = [];
  for (const [rel, variable, what] of TOOL_HOMES) {
    const p = (variable && env[variable]) || path.join(home, rel);
    if (p.startsWith(home + "/") && fs.existsSync(p) && !shown(p)) missing.push(`${p} (${what})`);
  }
  for (const inc of gitIncludes(home)) if (inc.startsWith(home + "/") && fs.existsSync(inc) && !shown(inc)) missing.push(`${inc} (included by ~/.gitconfig)`);
  if (!missing.length) return [];
  const paths = missing.map((m) => m.slice(0, m.indexOf(" (")));
  return [
    {
      check: "sandbox_home",
      ok: true,
      warning: true as const,
      detail: `a --sandbox workspace run no longer reads your home but for PATH's programs, python's user site, git's config and sandbox.allow_read; it cannot read ${missing.join(", ")}`,
      fix: `if agents need them, add to settings.yaml: sandbox: {allow_read: [${paths.join(", ")}]} (li sandbox show prints what a run sees)`,
    },
  ];
}
