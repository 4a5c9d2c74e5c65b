import { Command } from "../commander.js";
import { resolveTrustTargets, trustProject, untrustProject } from "../../config/project-trust.js";
import { loadSettings, type Handler, type SettingsFile } from "../../config/settings.js";
import { render, type CliContext } from "../adapter.js";
import { table } from "../format.js";

function handlerView(h: Handler, f: SettingsFile) {
  return {
    name: h.name,
    type: h.exec ? "exec" : "webhook",
    destination: h.exec ?? h.url,
    kinds: h.kinds,
    scope: h.scope,
    max_attempts: h.retry.max_attempts,
    backoff_seconds: h.retry.backoff_seconds,
    timeout_seconds: h.timeout_seconds,
    source: h.source,
    file: f.path,
    active: f.trust === "user" || f.trust === "trusted",
  };
}

export function register(root: Command, ctx: CliContext): void {
  const hooks = root
    .command("hooks")
    .description("terminal-notify handlers from settings.yaml, and trust for project settings (handlers, endpoints, worktree setup and checks)")
    .addHelpText(
      "after",
      `
Handlers live under notify.on_terminal in $LI_HOME/settings.yaml (always in force) or in a
project's .li/settings.yaml (in force only after \`li hooks trust\`, which pins the file's
sha256; any edit needs trust again). Example:

  notify:
    on_terminal:
      - {name: log, exec: ["/usr/bin/tee", "-a", "/tmp/li.log"], kinds: [invocation]}
      - {name: ci, url: "http://127.0.0.1:8080/li", scope: selected}
    retry: {max_attempts: 5, backoff_seconds: 1}

exec is an argv run without a shell (a string is split on spaces and may not contain shell
syntax). scope: all fires on every terminal transition of its kinds; scope: selected only for
runs started with --notify NAME (or whose parent was).

A project file may also define openai endpoints (endpoints: {NAME: {base_url, api_key_env}},
default_endpoint: NAME). They too apply only while the file is trusted: trusting it lets the
file decide where the named key variables' values are sent.

Its worktree section (setup, share) and its checks apply only while it is trusted too: trusting
the file lets its setup command run in every isolated run's new worktree and its checks run
after. li hooks trust prints each command it lets run.

A project file is trusted only as itself: one that is a symlink, or lies under one inside its
repository, is never in force, and li hooks trust refuses it, naming the link.

A project's profiles (.li/profiles/NAME.yaml, see li profile --help) are trusted the same
way, each file with the mcp_config file it names: a profile grants its runs permissions,
tools and MCP servers. li hooks trust with no path trusts the settings file and every
profile found from here; a path names one file, or a project directory.`,
    );

  hooks
    .command("list")
    .description("settings files with their trust state, and every handler they declare")
    .action(() =>
      render(ctx, () => {
        const s = loadSettings();
        const files = [
          ...s.files.map((f) => ({ path: f.path, source: f.source, trust: f.trust, sha256: f.sha256, error: f.error })),
          ...s.profileFiles.map((f) => ({ path: f.path, source: "project" as const, trust: f.trust, sha256: f.sha256, error: f.error })),
        ];
        const handlers = s.files.flatMap((f) => (f.parsed?.handlers ?? []).map((h) => handlerView(h, f)));
        const endpoints = s.files.flatMap((f) =>
          (f.parsed?.endpoints ?? []).map((e) => ({ name: e.name, base_url: e.base_url, api_key_env: e.api_key_env, source: e.source, file: f.path, active: f.trust === "user" || f.trust === "trusted" })),
        );
        const data = { files, handlers, endpoints, warnings: s.warnings };
        return {
          data,
          human: (d: typeof data) =>
            `${table(d.files, ["path", "source", "trust", "error"])}\n\n${table(d.handlers, ["name", "type", "destination", "kinds", "scope", "source", "active"])}` +
            (d.endpoints.length ? `\n\n${table(d.endpoints, ["name", "base_url", "api_key_env", "source", "active"])}` : ""),
        };
      }),
    );

  hooks
    .command("trust")
    .description("review-then-pin: let a project's .li/settings.yaml and .li/profiles/*.yaml take effect (human-only: never reachable from MCP)")
    .argument("[path]", "a settings or profile file, or a project directory (default: the project's files found from here)")
    .action((file: string | undefined) =>
      render(ctx, () => {
        const data = trustProject(resolveTrustTargets(file));
        return {
          data,
          human: (d: typeof data) =>
            [
              ...(d.path
                ? [
                    `trusted ${d.path} (sha256 ${d.sha256!.slice(0, 12)}…); its handlers now run:`,
                    ...(d.handlers.length ? d.handlers.map((h) => `  ${h.name}: ${h.exec ? JSON.stringify(h.exec) : `POST ${h.url}`}`) : ["  (none)"]),
                  ]
                : []),
              ...(d.endpoints.length
                ? ["and its endpoints apply:", ...d.endpoints.map((e) => `  ${e.name}: ${e.base_url} (key from ${e.api_key_env ?? "none"})`)]
                : []),
              ...(d.worktree.setup ? [`and an isolated run's new worktree runs its setup: ${d.worktree.setup}`] : []),
              ...(d.worktree.share.length ? [`and links the checkout's ${d.worktree.share.join(", ")} into it (share)`] : []),
              ...(Object.keys(d.checks).length ? ["and its checks run (--check NAME):", ...Object.entries(d.checks).map(([n, c]) => `  ${n}: ${c}`)] : []),
              ...d.profiles.map(
                (p) =>
                  `trusted profile ${p.name} (${p.path}): ${p.model}, permission_mode ${p.permission_mode ?? "(provider default)"}, allowed_tools ${p.allowed_tools?.join(" ") ?? "(provider default)"}${p.mcp_config ? `, MCP servers from ${p.mcp_config}` : ""}`,
              ),
            ].join("\n"),
        };
      }),
    );

  hooks
    .command("untrust")
    .description("withdraw trust from a project's settings file and profiles; its handlers stop firing, its profiles stop applying")
    .argument("[path]", "a settings or profile file, or a project directory (default: the project's files found from here)")
    .action((file: string | undefined) =>
      render(ctx, () => {
        const data = untrustProject(resolveTrustTargets(file));
        const line = (f: { path: string; was_trusted: boolean }) => (f.was_trusted ? `${f.path} is no longer trusted` : `${f.path} was not trusted`);
        return { data, human: (d: typeof data) => [...(d.path ? [line(d as { path: string; was_trusted: boolean })] : []), ...d.profiles.map(line)].join("\n") };
      }),
    );
}
