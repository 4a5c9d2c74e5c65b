import { LISTEN_ENV, storeLocation } from "./locate.js";

/*
 * The environment of a program li runs that is not li: an agent (provider CLI), a foreground
 * planner, a terminal-notify exec handler, the browser `li studio --open` starts. ADR D9: nothing
 * outside li gains a second write path into the store, so the store's address and the
 * credentials li reaches it with stay in li's processes (workers, drainers, the `li` subprocesses
 * of li mcp and the studio, which are li and get process.env as it is).
 *
 * The rule:
 * - LI_STORE is always removed, and LI_STORE_LISTEN (the direct connection beside a pooled store,
 *   a second address of the same database, with its own credentials) with it. An agent that calls `li` itself (li mcp in its MCP config) then
 *   finds its store as any li does without it: `store:` in settings.yaml, else $LI_HOME/state.db.
 *   So a shared store its agents' own li calls should reach belongs in settings.yaml.
 * - While a PostgreSQL store is in use (LI_STORE, or `store:` in settings.yaml; a settings file
 *   li cannot read counts as in use), the libpq variables that authenticate are removed too:
 *   PGPASSWORD, PGPASSFILE, PGSERVICE, PGSERVICEFILE (a service file may hold a password),
 *   PGSSLCERT, PGSSLKEY (a client certificate logs in), PGSSLPASSWORD and PGSSLCERTMODE
 *   (the key's passphrase, whether a certificate is sent). These may be what logs li in.
 * - Every other variable stays, PGHOST, PGPORT, PGUSER, PGDATABASE and the other libpq settings
 *   included: they name a server but prove nothing, and an agent working on the user's own
 *   database may need them. Without a PostgreSQL store nothing but LI_STORE is removed, so an
 *   agent's own database credentials reach it as they did.
 * - A profile's `env:` is applied after this, as written: it is the user granting that variable
 *   to that profile's runs (a PGPASSWORD for the agent's own database). LI_STORE alone is removed
 *   from it too, since with it the agent's li would open the store li does without asking.
 *
 * This keeps li from handing the store out; it is not a sandbox. An agent runs as the same user
 * and can read what that user can (settings.yaml, ~/.pgpass): a store that agents must not write
 * to directly needs credentials they cannot read and a role of the database's own.
 */

export const STORE_ENV = "LI_STORE";

/** Names the descriptor a li process reads the store's secrets from (store-handoff.ts); never an agent's. */
export const HANDOFF_ENV = "LI_STORE_FD";

/** libpq's (and node-postgres's) variables that carry or select a credential. */
export const PG_CREDENTIAL_ENV = ["PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE", "PGSSLCERT", "PGSSLKEY", "PGSSLPASSWORD", "PGSSLCERTMODE"] as const;

/** True when li's store is a PostgreSQL one here; a settings file that cannot be read says yes (fail closed). */
export function postgresInUse(base: NodeJS.ProcessEnv): boolean {
  if (base[STORE_ENV] || base[LISTEN_ENV]) return true;
  try {
    return storeLocation().kind === "postgres";
  } catch {
    return true;
  }
}

/**
 * The environment for a program li starts that is not li: `base` (this process's environment)
 * without the store and its credentials, then `granted` (a profile's env, a provider's own
 * variables) on top, LI_STORE removed from it as well.
 */
export function childEnv(base: NodeJS.ProcessEnv = process.env, ...granted: (Record<string, string> | undefined)[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  delete env[STORE_ENV];
  delete env[LISTEN_ENV];
  delete env[HANDOFF_ENV];
  if (postgresInUse(base)) for (const name of PG_CREDENTIAL_ENV) delete env[name];
  for (const extra of granted) Object.assign(env, extra);
  delete env[STORE_ENV];
  delete env[LISTEN_ENV];
  return env;
}
