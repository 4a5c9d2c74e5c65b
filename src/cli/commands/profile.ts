import type { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { profileView, PROFILE_EXAMPLE } from "../../config/profiles.js";
import { loadSettings, userSettingsPath } from "../../config/settings.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";

const PROFILE_HELP = `
A profile is a named preset of a run, defined only in settings:
  - in ${"$"}LI_HOME/settings.yaml, under profiles: {NAME: {...}} (always in force);
  - in a project, as .li/profiles/NAME.yaml (one profile, its keys at the top), in force
    only after \`li hooks trust\` pinned the file and the mcp_config file it names.
Keys: model (provider/model, required), description, system_prompt, append_system_prompt,
permission_mode, allowed_tools, disallowed_tools, effort, max_turns, max_budget_usd,
mcp_config (a path, relative to the file), env (a mapping), timeout_seconds. A key its
provider cannot honour is refused by name when settings load.

Runs use one with --profile NAME (li agent, li o flow, li o fanout, li play, li schedule
create). A profile grants permissions, so no command takes a permission mode, a tool list
or an MCP config file of its own, and an MCP client can choose a profile but never define
or widen one. Env values are never shown, only their names.

Example (settings.yaml):
  profiles:
    reviewer:
      model: claude/sonnet
      permission_mode: plan
      allowed_tools: [Read, Grep, "Bash(git diff:*)"]
      max_turns: 20`;

export function register(root: Command, ctx: CliContext): void {
  const profile = root.command("profile").description("profiles from settings: named presets of a run (model, permissions, tools, limits, MCP servers)").addHelpText("after", PROFILE_HELP);

  profile
    .command("list")
    .description("every profile in force, and the project profiles ignored until trusted")
    .addHelpText("after", "\nExamples:\n  li profile list\n  li --machine profile list")
    .action(() =>
      render(ctx, () => {
        const s = loadSettings();
        const profiles = s.profiles.map((p) => profileView(p));
        const ignored = s.profileFiles
          .filter((f) => f.trust !== "trusted")
          .map((f) => ({ name: f.name, file: f.path, trust: f.trust, error: f.error, model: f.profile?.model ?? null, remedy: `review it, then run li hooks trust ${f.path}` }));
        const data = { profiles, ignored, count: profiles.length };
        return {
          data,
          human: (d: typeof data) =>
            table(d.profiles, ["name", "model", "permission_mode", "source", "description"]) +
            (d.ignored.length ? `\n\nignored (not trusted):\n${table(d.ignored, ["name", "trust", "file"])}` : ""),
        };
      }),
    );

  profile
    .command("show")
    .description("one profile as runs get it: model, prompts, permissions, tools, limits, MCP config, env names")
    .argument("<name>", "the profile name")
    .addHelpText("after", "\nExample:\n  li profile show reviewer")
    .action((name: string) =>
      render(ctx, () => {
        const s = loadSettings();
        const p = s.profiles.find((x) => x.name === name);
        if (!p) {
          const ignored = s.profileFiles.find((f) => f.name === name);
          const hint = ignored
            ? `; ${ignored.path} declares it but is ${ignored.trust === "changed" ? "changed since it was trusted" : "not trusted"}: review it, then run \`li hooks trust\``
            : `; define it under profiles in ${userSettingsPath()} (${PROFILE_EXAMPLE}) or in .li/profiles/${name}.yaml`;
          throw new LiError("not_found", `no profile named ${name} (defined: ${s.profiles.map((x) => x.name).join(", ") || "none"})${hint}`, { name, known: s.profiles.map((x) => x.name) });
        }
        const data = { profile: profileView(p) };
        return { data, human: (d: typeof data) => keyValues(d.profile as unknown as Record<string, unknown>) };
      }),
    );
}
