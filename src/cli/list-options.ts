import { type Command, Option } from "./commander.js";
import type { EntityFilter } from "../lifecycle/listing.js";
import type { Page } from "../lifecycle/pages.js";
import { ENTITY_KINDS, STATUSES } from "../lifecycle/vocab.js";
import { LIMITS, pageLimitArg } from "./parsers.js";
import { parseSince } from "./since.js";

/** The options every entity list shares, as commander hands them over. */
export interface ListOptions {
  status?: string[];
  kind?: string[];
  label?: string[];
  host?: string[];
  since?: string;
  cursor?: string;
  limit: number;
}

/** Adds the shared filters and paging to an entity list command. */
export function addListOptions(cmd: Command, noun: string, defaultLimit: number): Command {
  return cmd
    .addOption(new Option("--status <status...>", "only these statuses").choices(STATUSES as string[]))
    .addOption(new Option("--kind <kind...>", "only these kinds").choices(ENTITY_KINDS as unknown as string[]))
    .option("--label <label...>", "only records with one of these labels")
    .option("--host <host...>", "only records of these hosts (LI_HOST names, on a shared store): made or claimed there, or placed there by name and not yet claimed")
    .option("--since <time>", "only records created since: an ISO 8601 time, seconds ago, or an age (30m, 2h, 7d)")
    .option("--cursor <cursor>", "start after the previous page: its next_cursor, with the same filters")
    .option("--limit <n>", `at most N ${noun} per page (${LIMITS.page} at most)`, pageLimitArg, defaultLimit);
}

export function entityFilter(o: ListOptions): EntityFilter {
  return { status: o.status, kind: o.kind, label: o.label, host: o.host, since: o.since === undefined ? undefined : parseSince(o.since) };
}

/** The raw paging fields of a list result (machine and human alike). */
export const pageData = (p: Page<unknown>) => ({ count: p.rows.length, total: p.total, next_cursor: p.next_cursor });

const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);

/**
 * The human footer under a page: how much of the whole it is and, when there is more, the
 * command that shows the next page (the same filters, the new cursor).
 */
export function pageFooter(p: Page<unknown>, command: string, o: ListOptions, f: EntityFilter, defaultLimit: number, extra: string[] = []): string {
  // Nothing to say when the page is the whole list.
  if (p.rows.length === 0 || (!p.next_cursor && p.before === 0)) return "";
  const range = p.before > 0 ? ` (${p.before + 1}–${p.before + p.rows.length})` : "";
  const head = `${p.rows.length} of ${p.total} shown${range}`;
  if (!p.next_cursor) return head;
  const words = [command, ...extra];
  for (const [flag, values] of [["--status", o.status], ["--kind", o.kind], ["--label", o.label], ["--host", o.host]] as const) if (values?.length) words.push(flag, ...values.map(quote));
  // The absolute time: "2h" again later would move the window under the pages already read.
  if (f.since) words.push("--since", f.since.toISOString());
  if (o.limit !== defaultLimit) words.push("--limit", String(o.limit));
  words.push("--cursor", p.next_cursor);
  return `${head}; next: ${words.join(" ")}`;
}
