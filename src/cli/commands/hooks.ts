import { Command } from "../commander.js";
import { loadSettings, resolveProjectFile, trustProjectFile, untrustProjectFile, type Handler, type SettingsFile } from "../../settings.js";
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
    .description("terminal-notify handlers from settings.yaml, and trust for project settings (handlers and endpoints)")
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
file decide where the named key variables' values are sent.`,
    );

  hooks
    .command("list")
    .description("settings files with their trust state, and every handler they declare")
    .action(() =>
      render(ctx, () => {
        const s = loadSettings();
        const files = s.files.map((f) => ({ path: f.path, source: f.source, trust: f.trust, sha256: f.sha256, error: f.error }));
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
    .description("review-then-pin: let a project's .li/settings.yaml take effect (human-only: never reachable from MCP)")
    .argument("[path]", "the settings file, or a directory holding .li/settings.yaml (default: the one found from here)")
    .action((file: string | undefined) =>
      render(ctx, () => {
        const data = trustProjectFile(resolveProjectFile(file));
        return {
          data,
          human: (d: typeof data) =>
            [
              `trusted ${d.path} (sha256 ${d.sha256.slice(0, 12)}…); its handlers now run:`,
              ...(d.handlers.length ? d.handlers.map((h) => `  ${h.name}: ${h.exec ? JSON.stringify(h.exec) : `POST ${h.url}`}`) : ["  (none)"]),
              ...(d.endpoints.length
                ? ["and its endpoints apply:", ...d.endpoints.map((e) => `  ${e.name}: ${e.base_url} (key from ${e.api_key_env ?? "none"})`)]
                : []),
            ].join("\n"),
        };
      }),
    );

  hooks
    .command("untrust")
    .description("withdraw trust from a project settings file; its handlers stop firing")
    .argument("[path]", "the settings file, or a directory holding .li/settings.yaml (default: the one found from here)")
    .action((file: string | undefined) =>
      render(ctx, () => {
        const data = untrustProjectFile(resolveProjectFile(file));
        return { data, human: (d: typeof data) => (d.was_trusted ? `${d.path} is no longer trusted` : `${d.path} was not trusted`) };
      }),
    );
}
