/**
 * The umask of the person who started li. li narrows its own to 077 for its private store files,
 * but what it writes into a person's checkout (li job apply) must come out as their own tools would
 * make it. A li started by li (the MCP server runs each op as `li --machine …`) inherits the 077,
 * so the first li hands the person's on in LI_PERSON_UMASK, read only by a li that starts at 077.
 */
const ENV = "LI_PERSON_UMASK";
let person: number | undefined;

/** Narrows this process's umask to 077, first keeping the person's. */
export function narrowUmask(): void {
  const was = process.umask(0o077);
  const passed = process.env[ENV];
  person = was === 0o077 && passed && /^[0-7]{3}$/.test(passed) ? parseInt(passed, 8) : was;
  process.env[ENV] = person.toString(8).padStart(3, "0");
}

/** The person's umask: as narrowUmask found it, or this process's own when nothing narrowed it. */
export function personUmask(): number {
  if (person !== undefined) return person;
  const own = process.umask(0o077);
  process.umask(own);
  return own;
}
