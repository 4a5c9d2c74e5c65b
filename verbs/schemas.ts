import type { VerbMeta } from "../src/mcp/verb.js";

/** Decoder fragments and metadata several verbs share. */
export const nullable = (type: string) => ({ type: [type, "null"] });

export const JOB = {
  type: "object",
  required: ["id", "kind", "host", "status", "terminal", "outcome", "reason_code"],
  properties: {
    id: { type: "string" },
    kind: { enum: ["invocation", "session", "play"] },
    // Null for a record made before hosts were recorded.
    host: nullable("string"),
    status: { type: "string" },
    terminal: { type: "boolean" },
    outcome: nullable("string"),
    reason_code: nullable("string"),
  },
};

export const SPAWNED = {
  type: "object",
  required: ["id", "kind", "status"],
  properties: { id: { type: "string" }, kind: { enum: ["invocation", "session", "play"] }, status: { type: "string" } },
};

/** A `dry_run` spawn returns its plan instead of an entity. */
export const DRY_RUN = {
  type: "object",
  required: ["dry_run", "steps"],
  properties: { dry_run: { const: true }, steps: { type: "array" } },
};

export const SPAWNED_OR_PLAN = { anyOf: [SPAWNED, DRY_RUN] };

export const JOB_LIST = { type: "object", required: ["jobs"], properties: { jobs: { type: "array", items: JOB } } };

/** A prompt argument that may outgrow one argv element travels as a prompt file instead. */
export const PROMPT_SPILL = { arg: "prompt", option: "prompt_file", join: " " };

/**
 * CLI flags no spawn verb offers: --check-cmd runs a shell command of the caller's choosing, so
 * over MCP a run names a check from the user's settings instead (--check NAME).
 */
export const CLI_ONLY_FLAGS = ["--check-cmd"];

/** The directory a run works in lies within the client's roots when it declares any. */
export const CWD_IN_ROOTS: VerbMeta["withinRoots"] = { args: ["cwd"] };

/** What every submit verb shares: a fingerprint-gated spawn, always detached, prompt may spill, its cwd within roots. */
export const SUBMIT: Pick<VerbMeta, "requiresFingerprint" | "fixedFlags" | "spill" | "terminalFlags" | "withinRoots"> = {
  requiresFingerprint: true,
  fixedFlags: ["--detach"],
  spill: PROMPT_SPILL,
  terminalFlags: CLI_ONLY_FLAGS,
  withinRoots: CWD_IN_ROOTS,
};

/** v1 names were accepted for one release and retired on this date (ADR-0066 D1). */
const V1_RETIRED_ON = "2026-09-30";

/** A retired v1 synonym of a verb. */
export const v1 = (name: string) => [{ name, retiresOn: V1_RETIRED_ON }];

/** One schedule as the schedule commands print it. */
export const SCHEDULE = {
  type: "object",
  required: ["id", "name", "cron", "timezone", "enabled", "model", "next_run_at", "last_fired_at"],
  properties: {
    id: { type: "string" },
    name: { type: "string" },
    cron: { type: "string" },
    timezone: { type: "string" },
    enabled: { type: "boolean" },
    model: { type: "string" },
    next_run_at: nullable("string"),
    last_fired_at: nullable("string"),
  },
};

/** A team with its members, as team create and team show print it. */
export const TEAM_SHOW = {
  type: "object",
  required: ["team", "members", "message_count"],
  properties: {
    team: { type: "object", required: ["id", "name"], properties: { id: { type: "string" }, name: { type: "string" } } },
    members: { type: "array", items: { type: "object", required: ["name", "sent", "received", "unread", "read_through"] } },
    message_count: { type: "integer" },
  },
};

export const MESSAGE = {
  type: "object",
  required: ["id", "from", "to", "body", "created_at"],
  properties: { id: { type: "string" }, from: { type: "string" }, to: { type: "string" }, body: { type: "string" }, created_at: { type: "string" } },
};
