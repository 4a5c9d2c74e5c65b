import { InvalidArgumentError } from "./commander.js";
import { HOST_PATTERN } from "../lifecycle/locate.js";

/*
 * Value parsers for commander options. The MCP projector recognises each by identity and reads
 * the JSON Schema it declares (ADR-0066 D3), so a parser's range is the schema's range: a value
 * the schema accepts is one the parser accepts, and a timer never gets a number it cannot hold.
 */

const SCHEMAS = new Map<Function, Record<string, unknown>>();

/** The JSON Schema a known parser stands for (the projector's only source of numeric types). */
export const parserSchema = (fn: Function): Record<string, unknown> | undefined => SCHEMAS.get(fn);

function declare<T extends (value: string) => unknown>(fn: T, schema: Record<string, unknown>): T {
  SCHEMAS.set(fn, schema);
  return fn;
}

const plain = (n: number) => (Number.isInteger(n) && Math.abs(n) >= 1e21 ? BigInt(n).toString() : String(n));

/** An integer parser accepting exactly [min, max]. */
export function intIn(min: number, max: number): (value: string) => number {
  return declare(
    (value: string) => {
      if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`expected an integer, got ${JSON.stringify(value)}`);
      const n = Number(value);
      if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${plain(min)} to ${plain(max)}, got ${value}`);
      return n;
    },
    { type: "integer", minimum: min, maximum: max },
  );
}

/** A number parser accepting [min, max]; with `above`, min itself is excluded. */
export function numberIn(min: number, max: number, opts: { above?: boolean } = {}): (value: string) => number {
  const low = opts.above ? { exclusiveMinimum: min } : { minimum: min };
  return declare(
    (value: string) => {
      const n = Number(value);
      if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got ${JSON.stringify(value)}`);
      if ((opts.above ? n <= min : n < min) || n > max)
        throw new InvalidArgumentError(`expected a number ${opts.above ? "above" : "from"} ${min}${opts.above ? " and at most" : " to"} ${max}, got ${value}`);
      return n;
    },
    { type: "number", ...low, maximum: max },
  );
}

/** The widest ranges: any integer a double holds exactly, any finite number (callers clamp). */
export const integerArg = intIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
export const numberArg = declare((value: string) => {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}, { type: "number" });

/** The bounds shared by many commands. */
export const LIMITS = {
  /** The largest page a list returns. */
  page: 1000,
  /** Seconds a run may be given before it is stopped (30 days; longer timers are chained). */
  run_timeout_seconds: 30 * 24 * 3600,
  /** A kill's grace between SIGTERM and SIGKILL. */
  grace_seconds: 600,
} as const;

export const pageLimitArg = intIn(1, LIMITS.page);
export const runTimeoutArg = numberIn(0, LIMITS.run_timeout_seconds, { above: true });

/**
 * Words a command joins into one text (a prompt, a message body). Variadic-safe: each value is
 * appended to the ones before, so the CLI gets every word; an MCP caller may send one string.
 */
export function textWords(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Variadic-safe parsers and the schema of the whole (not per-item) value. */
const VARIADIC = new Map<Function, Record<string, unknown>>([[textWords, { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }]]);

/** The schema of a variadic value whose parser keeps every value, or undefined. */
export const variadicSchema = (fn: Function): Record<string, unknown> | undefined => VARIADIC.get(fn);

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 7 * 86400 };
const DURATION = /^(\d+(?:\.\d+)?)(s|m|h|d|w)?$/;

/**
 * A duration such as 90s, 10m, 12h, 7d or 2w (a bare number is seconds), in seconds, from `min`
 * to `max` seconds. Declared as a string with its pattern: that is what a caller writes.
 */
export function durationIn(min: number, max: number): (value: string) => number {
  return declare(
    (value: string) => {
      const m = DURATION.exec(value.trim());
      if (!m) throw new InvalidArgumentError(`expected a duration such as 90s, 10m, 12h, 7d or 2w, got ${JSON.stringify(value)}`);
      const n = Number(m[1]) * UNIT_SECONDS[m[2] ?? "s"];
      if (n < min || n > max) throw new InvalidArgumentError(`expected a duration from ${min}s to ${max}s, got ${value} (${n}s)`);
      return n;
    },
    { type: "string", pattern: "^[0-9]+(\\.[0-9]+)?(s|m|h|d|w)?$" },
  );
}

/** --approval-timeout on every spawn command: 1 s to a week (config/approval-settings.ts). */
export const approvalTimeoutArg = durationIn(1, 7 * 86400);

/** --host on every spawn command. */
export const HOST_OPTION_HELP = "start on this host (a name from li host list) or on any host: queued for a host daemon (li host run) to claim, so the run is detached (--host implies --detach); without it the run starts here";

/** --allow-new-host, beside --host on every spawn command. */
export const ALLOW_NEW_HOST_HELP = "with --host NAME: place the run even though no daemon has registered NAME yet (a host not started yet); without it such a name is refused, with the near names";

/** --host: a host name (LI_HOST's rule) or `any`. */
export const hostPlacementArg = declare(
  (value: string) => {
    if (value !== "any" && !HOST_PATTERN.test(value))
      throw new InvalidArgumentError(`expected a host name (1–63 letters, digits, ".", "_" or "-", as LI_HOST) or any, got ${JSON.stringify(value)}; li host list shows the hosts`);
    return value;
  },
  { type: "string", pattern: `^(any|${HOST_PATTERN.source.slice(1, -1)})$` },
);
