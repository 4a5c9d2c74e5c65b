import fs from "node:fs";
import path from "node:path";
import type { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { loadSettings } from "../../config/settings.js";
import { render, type CliContext } from "../adapter.js";

const SHOW_HELP = `
Prints the policy a run started with --sandbox workspace would get here, computed by the same
rules the worker mounts (docs/sandbox.md): what it may write, what it may read only (the parts of
the home it sees and why: PATH directories and their install prefixes, python's user site, git's
config, sandbox.allow_read, the provider's configuration), what is hidden (the home, li's home,
credentials, the other providers' state, sandbox.deny_read), the places private to the run (/tmp,
/var/tmp, /dev/shm, /run, $XDG_RUNTIME_DIR), the provider's state directory, the hosts its proxy
admits, the environment variables removed, and the limits; last, the exec-only copies of li's
programs (how many, their size, how many are of an earlier version). For a run in the checkout; an
isolated run's tree is its own worktree.

--profile NAME takes the provider and the environment from a profile (li profile list);
--model PROVIDER/MODEL names the provider without one. Without either no provider state is shown.
--cwd DIR: where the run would start (default: here).

"marked" lists the files in the tree that run code when it is opened (.envrc, .vscode/,
.mcp.json, ...), each with the tool that runs it: read-only in a checkout run, marked in an
isolated run's change (li job diff) and refused by li job apply unless a person accepts them.

Examples:
  li sandbox show --model claude/sonnet
  li --machine sandbox show --cwd . --model codex/gpt-5`;

export function register(root: Command, ctx: CliContext): void {
  const sandbox = root.command("sandbox").description("the workspace sandbox: li sandbox show prints what a run would see");
  sandbox
    .command("show")
    .description("what a --sandbox workspace run would get: writable, read-only, hidden and private paths, provider state, hosts, limits")
    .option("--profile <name>", "take the provider and environment from this profile")
    .option("--model <provider/model>", "the provider, when no profile names it")
    .option("--cwd <dir>", "where the run would start (default: the current directory)")
    .addHelpText("after", SHOW_HELP)
    .action((opts: { profile?: string; model?: string; cwd?: string }) =>
      render(ctx, async () => {
        const cwd = path.resolve(opts.cwd ?? process.cwd());
        if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) throw new LiError("invalid_input", `--cwd ${cwd} is not a directory`, { cwd });
        let model = opts.model ?? null;
        let env: NodeJS.ProcessEnv = process.env;
        if (opts.profile) {
          const p = loadSettings(cwd).profiles.find((x) => x.name === opts.profile);
          if (!p) throw new LiError("not_found", `no profile named ${opts.profile}; li profile list shows those in force`, { name: opts.profile });
          model = model ?? p.model;
          env = { ...process.env, ...p.env };
        }
        if (model !== null && !/^[a-z][a-z0-9-]*\//.test(model)) throw new LiError("invalid_input", `--model ${JSON.stringify(model)} is not provider/model, e.g. claude/sonnet`, { model });
        const { describeSandbox } = await import("../../runtime/sandbox/describe.js");
        const data = describeSandbox(cwd, model ? model.split("/")[0] : null, env);
        return { data, human: human };
      }),
    );
}

type Description = import("../../runtime/sandbox/describe.js").SandboxDescription;

function limitLine(k: "pids" | "memory" | "tmp", l: Description["limits"][typeof k]): string {
  if (l.value === null) return `${k}: not enforced: ${l.not_enforced}${l.source === "settings" ? " (set in settings: a run is refused here)" : ""}`;
  const what = k === "tmp" ? `each of ${(l as Description["limits"]["tmp"]).applies_to.join(", ")}` : k === "pids" ? "tasks (processes and threads)" : "memory, tmpfs pages included";
  return `${k}: ${l.shown} (${l.source}), ${what}; enforced by ${l.enforced_by}`;
}

function human(d: Description): string {
  const list = (title: string, xs: string[]) => `${title}:\n${xs.length ? xs.map((x) => `  ${x}`).join("\n") : "  (none)"}`;
  const st = d.provider_state;
  return [
    `tree: ${d.tree}${d.provider ? `   provider: ${d.provider}` : ""}`,
    `home: ${d.home.path} (${d.home.hidden ? "hidden but for what is listed read-only" : "not hidden: the run's tree holds it"})`,
    list("writable", d.writable),
    list("read-only", d.read_only.map((r) => `${r.path}   (${r.why})`)),
    list("hidden", d.hidden),
    list("private to the run", d.private),
    st
      ? `provider state: ${st.dir} is private to the run${st.moved_by ? ` (moved by ${st.moved_by})` : ""}\n  read-only: ${st.config.join(", ")}\n  the person's, writable: ${st.state.join(", ")}\n  written back when refreshed: ${st.credentials.join(", ")}\n  private copies: ${st.private_copies.join(", ") || "(none)"}`
      : "provider state: (name --profile or --model)",
    list("marked (files that run code when the tree is opened: read-only in a checkout run, marked in an isolated run's change)", d.marked.map((m) => `${m.path}   (${m.why})`)),
    list("hosts (through li's proxy)", d.hosts),
    list("environment removed", d.env_removed),
    `limits (sandbox.limits; besides --timeout and budgets):\n${(["pids", "memory", "tmp"] as const).map((k) => `  ${limitLine(k, d.limits[k])}`).join("\n")}`,
    d.exec_only.line,
  ].join("\n");
}
