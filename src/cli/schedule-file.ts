/**
 * A schedule definition as a file: what `li schedule export` writes and `li schedule create
 * --from-file` reads back, checked key by key.
 */
import { invalid } from "../errors.js";
import { isObject } from "../json.js";
import { scheduleView, type ScheduleRow } from "../lifecycle/schedules/store.js";
import { yaml } from "../packages.js";
import { readTextFile } from "../runtime/submit/file-args.js";
import type { AgentRunOptions } from "./agent-options.js";
import { durationIn } from "./parsers.js";

export interface DefineOptions extends AgentRunOptions {
  cron?: string;
  every?: number;
  timezone?: string;
  startAt?: string;
  disabled?: boolean;
  maxRuns?: number;
  once?: boolean;
  onFailure?: "continue" | "pause";
  fromFile?: string;
}

export const MAX_RUNS = 1_000_000;
export const everyArg = durationIn(10, 366 * 86400);
const FILE_KEYS = ["name", "cron", "every", "timezone", "start_at", "max_runs", "once", "on_failure", "enabled", "action"];
const FILE_CAP = 8 * 1024 * 1024;

export function fromFile(file: string): { name: string; words: string[]; opts: DefineOptions } {
  const text = readTextFile(file, "--from-file", FILE_CAP);
  let doc: unknown;
  try {
    doc = yaml().parse(text, { logLevel: "error" });
  } catch {
    throw invalid(`--from-file ${file} is not valid YAML or JSON`, { field: "from_file", from_file: file });
  }
  const bad = (key: string, what: string) => invalid(`--from-file ${file}: ${key}: ${what}`, { field: "from_file", from_file: file, key });
  if (!isObject(doc)) throw bad("(top)", "expected a mapping of name, cron or every, action, …");
  for (const k of Object.keys(doc)) if (!FILE_KEYS.includes(k)) throw bad(k, `unknown key; known keys: ${FILE_KEYS.join(", ")}`);
  if (typeof doc.name !== "string") throw bad("name", "required: the schedule's name");
  if (!Array.isArray(doc.action) || !doc.action.length || doc.action.some((a) => typeof a !== "string")) throw bad("action", "required: the action as a list of words, e.g. [agent, mock/echo, --, hello]");
  const str = (k: string) => (doc[k] === undefined || doc[k] === null ? undefined : String(doc[k]));
  let every: number | undefined;
  if (doc.every !== undefined && doc.every !== null) {
    try {
      every = everyArg(String(doc.every));
    } catch (err) {
      throw bad("every", (err as Error).message);
    }
  }
  const maxRuns = doc.max_runs === undefined || doc.max_runs === null ? undefined : Number(doc.max_runs);
  if (maxRuns !== undefined && !(Number.isInteger(maxRuns) && maxRuns >= 1 && maxRuns <= MAX_RUNS)) throw bad("max_runs", `expected an integer from 1 to ${MAX_RUNS}`);
  if (doc.on_failure !== undefined && doc.on_failure !== "continue" && doc.on_failure !== "pause") throw bad("on_failure", "expected continue or pause");
  return {
    name: doc.name,
    words: doc.action as string[],
    opts: {
      cron: str("cron"),
      every,
      timezone: str("timezone"),
      startAt: str("start_at"),
      maxRuns,
      once: doc.once === true,
      onFailure: (doc.on_failure as DefineOptions["onFailure"]) ?? "continue",
      disabled: doc.enabled === false,
    },
  };
}

/** A stored schedule as the file `li schedule create --from-file` accepts back. */
export function exportDoc(row: ScheduleRow): Record<string, unknown> {
  const v = scheduleView(row, { prompt: true });
  const everyText = (s: number) => row.cron.replace(/^@every /, "") || `${s}s`;
  const legacy = !row.action;
  const spec = JSON.parse(row.spec);
  // Before migration 7 an agent schedule kept its options in the spec: spell them as flags.
  const argv = legacy
    ? [
        "agent",
        ...(spec.cwd ? [`--cwd=${spec.cwd}`] : []),
        ...(spec.timeout_seconds ? [`--timeout=${spec.timeout_seconds}`] : []),
        ...(row.label ? [`--label=${row.label}`] : []),
        ...((spec.notify ?? []) as string[]).map((n) => `--notify=${n}`),
        ...(spec.endpoint ? [`--endpoint=${spec.endpoint}`] : []),
        row.model,
        "--",
        row.prompt,
      ]
    : [v.kind, ...v.action];
  return {
    name: row.name,
    ...(row.every_seconds ? { every: everyText(row.every_seconds) } : { cron: row.cron }),
    timezone: row.timezone,
    ...(row.max_runs ? { max_runs: row.max_runs } : {}),
    on_failure: row.on_failure ?? "continue",
    enabled: row.enabled === 1,
    action: argv,
  };
}
