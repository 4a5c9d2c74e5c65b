import { Command } from "../commander.js";
import { LiError } from "../../errors.js";
import { liHome } from "../../lifecycle/paths.js";
import { openStore } from "../../lifecycle/open.js";
import { approvalRuleChecks } from "../doctor-approvals.js";
import { diskCheck, homeCheck, hostsCheck, settingsCheck, storeCheck, ticksCheck } from "../doctor-checks.js";
import { worktreesCheck } from "../doctor-worktrees.js";
import { settingsSecretCheck } from "../doctor-secrets.js";
import { credentialsCheck } from "../doctor-credentials.js";
import { wakeupsCheck } from "../doctor-wakeups.js";
import { permissionWarnings, sandboxCheck } from "../doctor-sandbox.js";
import { sandboxHomeWarnings } from "../doctor-sandbox-home.js";
import { sandboxLimitsChecks } from "../doctor-sandbox-limits.js";
import { execOnlyChecks } from "../doctor-exec-only.js";
import { PROVIDERS } from "../../runtime/providers/index.js";
import { builtinEndpoint, type Endpoint } from "../../config/endpoints.js";
import { loadSettings, type Settings } from "../../config/settings.js";
import { render, type CliContext } from "../adapter.js";
import { table } from "../format.js";

/** An endpoint as doctor shows it: whether its key variable is set, never the key. */
function endpointView(e: Endpoint, defaultName: string) {
  return {
    name: e.name,
    default: e.name === defaultName,
    base_url: e.base_url,
    api_key_env: e.api_key_env,
    key_set: e.api_key_env === null ? null : Boolean(process.env[e.api_key_env]),
    key_required: e.key_required,
    source: e.source,
    file: e.file,
  };
}

export function register(root: Command, ctx: CliContext): void {
  root
    .command("doctor")
    .description("check LI_HOME, its disk, the state store, settings, trust, schedule ticks and this host's daemon; list providers and endpoints")
    .addHelpText(
      "after",
      `
Checks, each passing or failing with the fix: li_home (a writable directory on a disk),
disk (free space), store (state.db's integrity and schema; none yet is fine), settings
(every settings file in force parses), sandbox (this host can run --sandbox workspace, or what
it lacks and how to install it; a failure only when settings or a profile ask for workspace),
sandbox_permissions (a warning, not a failure, for each profile that turns its provider's
permission checks off, bypassPermissions, danger-full-access or yolo, while its runs are not
sandboxed), sandbox_home (a warning naming what in your home a workspace run no longer reads,
toolchain folders outside PATH such as ~/.rustup and files ~/.gitconfig includes, and the
sandbox.allow_read line that shows them), sandbox_limits (what enforces a workspace run's pids
and memory limits here: li's own cgroup v2, a systemd user scope, or cgroup v1; a warning when
this host cannot enforce them: no cgroup li may make; a failure when settings.yaml sets one it
cannot, since every workspace run here is then refused), settings_secret (shown only when $LI_HOME/settings.yaml
holds the store's password: no one but its owner can read it), trust (no trusted project file changed since
li hooks trust), approval_rules (each rule of approvals.rules in force is one li uses: an
allow rule on a shell tool names its command with command:, not input_matches, and each
command: parses; a run with approvals: ask is refused while one does not), schedule_ticks (enabled schedules have been ticked within 2 minutes), hosts
(on a store shared with other hosts, this host runs li host run: its lease is alive; a host
that has never run one and has no unfinished runs of its own and none placed on it by name
only submits, a normal role, shown as info),
store_credentials (on a PostgreSQL store: this host's daemon has neither LI_STORE with a
password nor a libpq credential variable in its environment, which every process of its
user, agents included, can read), store_wakeups (on a PostgreSQL store: li wait, --follow and
approval waits are woken by LISTEN on a connection that reaches PostgreSQL itself; behind a
transaction-mode pooler without LI_STORE_LISTEN, or store_listen: in settings.yaml, they poll:
a warning naming the setting; a listen URL that reaches a pooler fails).
li doctor fails (exit 1; with --machine an error whose detail holds every check) when any
check fails. Providers and endpoints are listed, not judged.

Endpoints come from settings.yaml (endpoints: {NAME: {base_url, api_key_env}}), in
$LI_HOME/settings.yaml or a trusted project .li/settings.yaml, plus the built-in openai.
key_set says whether each endpoint's key variable is set here; the key itself is never shown.

Examples:
  li doctor
  li --machine doctor | jq '.data // .error.detail | .checks[] | select(.ok | not)'`,
    )
    .action(() =>
      render(ctx, async () => {
        const home = homeCheck();
        let settings: Settings | null = null;
        let settingsError: string | null = null;
        try {
          settings = loadSettings();
        } catch (err) {
          settingsError = err instanceof Error ? err.message : String(err);
        }
        const defaultName = settings?.default_endpoint ?? builtinEndpoint().name;
        const endpoints = (settings?.endpoints ?? [builtinEndpoint()]).map((e) => endpointView(e, defaultName));
        const fallback = settings?.endpoints.find((e) => e.name === defaultName);
        const providers = PROVIDERS.map((p) => ({ name: p.name, ...p.availability(p.usesEndpoint && fallback ? { endpoint: fallback } : {}) }));
        // No read-only fallback: a full disk is exactly what a health check must report.
        const healthy = home.ok;
        const { check: storeResult, store } = healthy ? (await storeCheck(() => openStore())) : { check: null, store: { ok: false, error: "not checked: see li_home" } };
        const checks = [
          home,
          ...(healthy ? [diskCheck(), worktreesCheck(), storeResult!] : []),
          ...settingsCheck(settings, settingsError),
          await sandboxCheck(settings),
          ...permissionWarnings(settings),
          ...(await approvalRuleChecks(settings)),
          ...sandboxHomeWarnings(settings),
          ...(await sandboxLimitsChecks(settings)),
          ...(await execOnlyChecks()),
          ...[settingsSecretCheck()].filter((c) => c !== null),
          ...(healthy && storeResult!.ok ? [await ticksCheck(() => openStore()), await hostsCheck(() => openStore()), await credentialsCheck(() => openStore())] : []),
          ...(healthy && storeResult!.ok ? [await wakeupsCheck(() => openStore())].filter((c) => c !== null) : []),
        ];
        const problems = checks.filter((c) => !c.ok);
        let liHomePath: string | null = null;
        try {
          liHomePath = liHome();
        } catch {}
        const data = {
          ok: problems.length === 0,
          li_home: liHomePath,
          checks,
          store,
          providers,
          endpoints,
          settings: { ok: settingsError === null, error: settingsError, warnings: settings?.warnings ?? [] },
        };
        const summary = `li doctor: ${problems.length} problem(s): ${problems.map((p) => `${p.check}: ${p.detail}; fix: ${p.fix}`).join(" | ")}`;
        // With --machine a failed check is a failed command: ok:false, exit 1, every check in the detail.
        if (problems.length && ctx.machine) throw new LiError("unavailable", summary, data);
        return {
          data,
          human: (d: typeof data) =>
            [
              `li_home  ${d.li_home ?? "(unset)"}`,
              `checks:\n${d.checks.map((c) => `  ${c.info ? "info" : c.warning ? "WARN" : c.ok ? "ok  " : "FAIL"}  ${c.check.padEnd(14)}  ${c.detail}${c.fix ? `\n        fix: ${c.fix}` : ""}`).join("\n")}`,
              `providers:\n${table(d.providers as any[], ["name", "available", "detail", "remedy"])}`,
              `endpoints:\n${table(d.endpoints, ["name", "default", "base_url", "api_key_env", "key_set", "source"])}`,
              ...d.settings.warnings,
              d.ok ? "no problems found" : `${problems.length} problem(s) found`,
            ].join("\n\n"),
          exitCode: problems.length ? 1 : 0,
        };
      }),
    );
}
