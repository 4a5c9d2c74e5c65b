import type { Command } from "./commander.js";
import type { CliContext } from "./adapter.js";

/** A command module adds its own subtree under the root program. */
export interface CommandModule {
  register(root: Command, ctx: CliContext): void;
}

export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<CommandModule>;
}

/**
 * The lazy command registry: only the selected entry's module is imported.
 * Adding a command is one line here plus its module under commands/.
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: "agent", summary: "run one agent (foreground, or --detach for a background job)", load: () => import("./commands/agent.js") },
  { name: "o", summary: "orchestrate: li o flow (a planned DAG of steps), li o fanout (N workers in parallel)", load: () => import("./commands/o.js") },
  { name: "play", summary: "run a playbook (a named, parameterised flow); li play list, li play show NAME", load: () => import("./commands/play.js") },
  { name: "job", summary: "inspect jobs: status, output, list; an isolated run's diff, and apply", load: () => import("./commands/job.js") },
  { name: "wait", summary: "wait for jobs to reach a terminal status (bounded)", load: () => import("./commands/wait.js") },
  { name: "kill", summary: "cancel entities and everything under them (several ids, --label, --dry-run)", load: () => import("./commands/kill.js") },
  { name: "approvals", summary: "permission requests of runs started with --approvals ask, pending ones from every host", load: () => import("./commands/approvals.js") },
  { name: "approve", summary: "allow a pending approval request (--message, --for-run)", load: () => import("./commands/approve.js") },
  { name: "deny", summary: "deny a pending approval request (--message: the reason the agent reads)", load: () => import("./commands/deny.js") },
  { name: "rerun", summary: "run a run's stored request again, as a new run linked to the old one", load: () => import("./commands/rerun.js") },
  { name: "clean", summary: "remove finished runs' records and directories (--older-than, --status, --dry-run)", load: () => import("./commands/clean.js") },
  { name: "schedule", summary: "schedules of agent runs, flows, fan-outs and plays: create, validate, export, list, trigger, runs, tick, daemon", load: () => import("./commands/schedule.js") },
  { name: "host", summary: "the hosts sharing one store: li host run (this host's daemon), list, forget", load: () => import("./commands/host.js") },
  { name: "team", summary: "teams of named members exchanging messages: create, list, show, send, receive", load: () => import("./commands/team.js") },
  { name: "monitor", summary: "one snapshot: counts, active jobs, recent failures, outbox, due schedules", load: () => import("./commands/monitor.js") },
  { name: "stats", summary: "counts by kind, status and outcome, and run durations", load: () => import("./commands/stats.js") },
  { name: "dispatch", summary: "the terminal-notify outbox: list, show, retry, ack, purge deliveries", load: () => import("./commands/dispatch.js") },
  { name: "profile", summary: "profiles from settings: named presets of a run (li profile list, li profile show NAME)", load: () => import("./commands/profile.js") },
  { name: "budget", summary: "spending limits in USD or tokens across providers and hosts: set, list, show, delete", load: () => import("./commands/budget.js") },
  { name: "hooks", summary: "terminal-notify handlers in settings.yaml; trust a project's settings", load: () => import("./commands/hooks.js") },
  { name: "state", summary: "the lifecycle store: records, audit events, migrations", load: () => import("./commands/state.js") },
  { name: "sandbox", summary: "the workspace sandbox: li sandbox show prints what a run would see, write and reach", load: () => import("./commands/sandbox.js") },
  { name: "doctor", summary: "check providers, the state store and its schema", load: () => import("./commands/doctor.js") },
  { name: "studio", summary: "a local web dashboard of runs, flow graphs, changes, schedules, teams, budgets and the outbox (live)", load: () => import("./commands/studio.js") },
  { name: "mcp", summary: "serve the one-tool MCP surface over stdio", load: () => import("./commands/mcp.js") },
];

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name);
}
