import { Option, type Command } from "../commander.js";
import { approvalTimeoutArg } from "../parsers.js";

/*
 * --approvals and --approval-timeout, on every command that starts runs: a parser builder, so the
 * MCP projector sees them too (an MCP caller may ask for approvals; answering is a person's).
 */

export interface ApprovalOptions {
  approvals?: "ask" | "off";
  approvalTimeout?: number;
}

export function addApprovalOptions(cmd: Command, scope: string): Command {
  return cmd
    .addOption(
      new Option(
        "--approvals <mode>",
        `ask: the agent's permission prompts in ${scope} wait for a person's answer (li approvals, li approve, li deny) instead of being denied; off: left to the provider (the default, unless a profile says approvals: ask)`,
      ).choices(["ask", "off"]),
    )
    .option("--approval-timeout <duration>", "with --approvals ask: how long each request waits for an answer before it is denied as expired: seconds or 90s, 30m, 2h (default 30m, or the profile's approval_timeout)", approvalTimeoutArg);
}

/** The options as the runtime takes them (runtime/submit/submit.ts AgentRequest.approvals). */
export function approvalChoice(o: ApprovalOptions): { mode?: "ask" | "off"; timeout_seconds?: number } {
  return { ...(o.approvals !== undefined ? { mode: o.approvals } : {}), ...(o.approvalTimeout !== undefined ? { timeout_seconds: o.approvalTimeout } : {}) };
}
