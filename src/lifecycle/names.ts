import { clipped, invalid, quoted } from "../errors.js";

/** Names of schedules, teams and members: letters, digits, `.`, `_`, `-`; starting with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * `reservedPrefix` is the id prefix of the named kind: a name shaped like one of its own ids
 * would make `<name|id>` arguments ambiguous.
 */
export function checkName(what: string, name: string, reservedPrefix?: string): string {
  if (!NAME_PATTERN.test(name))
    throw invalid(`${what} name ${quoted(name)} is not allowed: use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit`, { field: what === "member" ? "member" : "name", name: clipped(name) });
  if (reservedPrefix && name.toLowerCase().startsWith(reservedPrefix))
    throw invalid(`${what} name ${JSON.stringify(name)} may not begin with ${reservedPrefix}, which ${what} ids use`, { field: "name", name });
  return name;
}
