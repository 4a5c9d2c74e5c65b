import fs from "node:fs";
import path from "node:path";

/*
 * codex loads a project's own `.codex/` (config.toml, hooks, exec policy rules such as
 * `prefix_rule(pattern=["rm"], decision="allow")`) only for a project its configuration trusts
 * (`projects."<dir>".trust_level = "trusted"` in the person's config.toml), and an explicitly
 * untrusted one stays untrusted whatever else says so. A run that asks marks the run's directory
 * and every directory above it untrusted in thread/start's config overrides, so the repository
 * cannot answer its own agent's requests before li is asked (issue 46), even where the person
 * once trusted it in codex. Their other `projects` entries are kept (overrides merge by key).
 */

/** `{projects: {DIR: {trust_level: "untrusted"}}}` for `cwd` and each directory above it, as given and resolved. */
export function untrustedProjects(cwd: string): { projects: Record<string, { trust_level: "untrusted" }> } {
  const dirs = new Set<string>();
  let real = cwd;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    // The directory as given, then.
  }
  for (const start of [path.resolve(cwd), real]) for (let d = start; ; d = path.dirname(d)) {
    dirs.add(d);
    if (path.dirname(d) === d) break;
  }
  return { projects: Object.fromEntries([...dirs].map((d) => [d, { trust_level: "untrusted" as const }])) };
}
