import type { Command } from "../commander.js";
import { PLAN_LIMITS } from "../../runtime/flow/plan.js";
import { ALLOW_NEW_HOST_HELP, HOST_OPTION_HELP, hostPlacementArg, intIn, runTimeoutArg } from "../parsers.js";
import { addEndpointOption } from "./endpoint-option.js";
import { textFileOption } from "./mcp-hints.js";
import { addIsolateOptions, type IsolateOptions } from "./isolate-options.js";
import { addApprovalOptions, type ApprovalOptions } from "./approval-options.js";
import { addProfileOption } from "./profile-options.js";

/*
 * A parser builder: what `li o flow`, `li o fanout` and `li play` share, importable by the MCP
 * projector without the code that runs sessions.
 */

/** Options every session-running command (o flow, o fanout, play) shares. */
export interface SessionOptions extends IsolateOptions, ApprovalOptions {
  promptFile?: string;
  cwd?: string;
  timeout?: number;
  label?: string;
  maxConcurrent?: number;
  workers?: string;
  synthesisModel?: string;
  synthesisPrompt?: string;
  dryRun?: boolean;
  detach?: boolean;
  notify?: string;
  endpoint?: string;
  profile?: string;
  queue?: string;
  host?: string;
  allowNewHost?: boolean;
}

/** Adds the shared options. `defaults` says where an unset value comes from (help text only). */
export function addSessionOptions(cmd: Command, defaults: { maxConcurrent: string }): Command {
  cmd
    .addOption(textFileOption("--prompt-file", "read the prompt from a file"))
    .option("--workers <models>", "comma-separated worker models or profile:NAME entries, assigned to steps round-robin (e.g. mock/echo,claude/sonnet,profile:reviewer)")
    .option("--max-concurrent <n>", `at most N steps run at once (1–${PLAN_LIMITS.max_concurrent}; default ${defaults.maxConcurrent})`, intIn(1, PLAN_LIMITS.max_concurrent))
    .option("--synthesis-model <model>", "after the steps, one more run combines their outputs (a model, or profile:NAME)")
    .option("--synthesis-prompt <text>", "the synthesis instruction (default: combine the outputs into one answer)")
    .option("--cwd <dir>", "working directory of every step (default: here)")
    .option("--timeout <seconds>", "per step: a step running longer is stopped (timed_out)", runTimeoutArg)
    .option("--label <text>", "a label shown in job lists")
    .option("--dry-run", "print the plan and run nothing (no record is written)")
    .option("--detach", "start in the background and print the id at once")
    .option("--notify <name>", "a terminal-notify handler from settings to fire when it ends")
    .option("--queue <name>", "under parallelism limits: wait in this queue from settings.yaml (queues: {NAME: {max_parallel: N}})")
    .option("--host <name>", HOST_OPTION_HELP, hostPlacementArg)
    .option("--allow-new-host", ALLOW_NEW_HOST_HELP);
  addProfileOption(cmd, "every run that names no profile of its own (planner, steps, synthesis)");
  addIsolateOptions(cmd, "a flow (all its steps) or each fan-out worker");
  addApprovalOptions(cmd, "every step or worker");
  return addEndpointOption(cmd);
}

