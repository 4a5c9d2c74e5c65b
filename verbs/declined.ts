import type { Declined } from "../src/mcp/registry.js";

/**
 * Every CLI command that is not a verb, with the decision and its reason: data beside the
 * allowlist, listed in help's `unavailable` and the registry report (ADR-0066 D4, D8). A new CLI
 * command needs an entry here or a verb, or test/mcp-catalog.test.ts fails.
 */
export const DECLINED: Declined[] = [
  { cliPath: ["state", "migrate"], reason: "fenced (D8): rewrites the store" },
  { cliPath: ["hooks", "trust"], reason: "fenced (D8): self-granted trust" },
  { cliPath: ["hooks", "untrust"], reason: "fenced (D8): for a person" },
  { cliPath: ["hooks", "list"], reason: "for a person" },
  { cliPath: ["schedule", "tick"], reason: "unattended machinery" },
  { cliPath: ["schedule", "daemon"], reason: "never returns" },
  { cliPath: ["host", "run"], reason: "never returns" },
  { cliPath: ["host", "forget"], reason: "fenced (D8)" },
  { cliPath: ["budget", "set"], reason: "fenced (D8): an agent never sets or raises a limit" },
  { cliPath: ["budget", "delete"], reason: "fenced (D8): an agent never removes a limit" },
  { cliPath: ["budget", "show"], reason: "for a person: budget.list has the figures" },
  { cliPath: ["dispatch", "purge"], reason: "destroys deliveries" },
  { cliPath: ["clean"], reason: "destroys runs" },
  { cliPath: ["rerun"], reason: "for a person" },
  { cliPath: ["approve"], reason: "fenced (D8): an agent never answers a request" },
  { cliPath: ["deny"], reason: "fenced (D8): an agent never answers a request" },
  { cliPath: ["schedule", "validate"], reason: "for a person" },
  { cliPath: ["schedule", "export"], reason: "for a person" },
  { cliPath: ["doctor"], reason: "for a person" },
  { cliPath: ["sandbox", "show"], reason: "for a person: maps the home" },
  { cliPath: ["studio"], reason: "a web server" },
  { cliPath: ["mcp"], reason: "this server itself" },
  { cliPath: ["mcp", "config"], reason: "for a person" },
  { cliPath: ["mcp", "classify"], reason: "a client hook" },
  { cliPath: ["mcp", "audit"], reason: "for a person" },
];
