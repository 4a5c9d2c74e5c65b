import type { Declined } from "../src/mcp/registry.js";

/**
 * Every CLI command that is not a verb, with the decision and its reason: data beside the
 * allowlist, listed in help's `unavailable` and the registry report (ADR-0066 D4, D8). A new CLI
 * command needs an entry here or a verb, or test/mcp-catalog.test.ts fails.
 */
export const DECLINED: Declined[] = [
  { cliPath: ["state", "migrate"], reason: "fenced: rewrites the store (D8)" },
  { cliPath: ["hooks", "trust"], reason: "fenced: self-granted privilege (D8)" },
  { cliPath: ["hooks", "untrust"], reason: "fenced: trust is decided by a person (D8)" },
  { cliPath: ["hooks", "list"], reason: "settings administration, for a person" },
  { cliPath: ["schedule", "tick"], reason: "unattended machinery: the scheduler fires schedules" },
  { cliPath: ["schedule", "daemon"], reason: "long-running: never returns a result" },
  { cliPath: ["dispatch", "purge"], reason: "destroys delivery records" },
  { cliPath: ["doctor"], reason: "for a person; server.info reports providers" },
  { cliPath: ["mcp"], reason: "this server itself" },
  { cliPath: ["mcp", "config"], reason: "client setup, for a person" },
  { cliPath: ["mcp", "classify"], reason: "a client permission hook, not a call" },
  { cliPath: ["mcp", "audit"], reason: "the server's op log, for a person" },
];
