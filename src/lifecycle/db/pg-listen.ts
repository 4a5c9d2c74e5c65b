import type { Client } from "pg";
import { LiError } from "../../errors.js";
import { pgFailure } from "./pg-errors.js";
import { redactUrl, scrubSecret } from "./pg-sql.js";

/*
 * The one LISTEN connection of a process (issue 49): opened at the first subscription, shared by
 * every channel the process waits on (a run's end, a console's chunks, an approval's answer), and
 * ended with the last, so a process holds one only while it waits.
 *
 * LISTEN is session state. Behind a transaction-mode pooler (PgBouncer, Supavisor, Neon's) a
 * session's next statement may run on another server connection, so a notification lands where
 * nobody listens, and the LISTEN stays on a server connection the pooler lends to its next client.
 * li never LISTENs through one: a connection is used only when the server behind it is the one it
 * talks to, which PostgreSQL proves by the backend pid it announces at connection (BackendKeyData)
 * being the pid its queries run in; a pooler announces a key of its own (docs/decisions.md).
 */

export type ListenRoute =
  /** A direct connection beside a pooled store (LI_STORE_LISTEN, or store_listen: in settings.yaml). */
  | { via: "store_listen"; url: string; source: string }
  /** The store's own URL: listened on when it reaches PostgreSQL itself. */
  | { via: "store"; url: string; pooled?: boolean };

interface Sub {
  onPayload(payload: string): void;
  onLost(): void;
}

/** The store's URL is a pooler (said by store_pooled, or found): li does not LISTEN there. */
export const POOLED_REASON = "store_pooled";

export class PgListener {
  private connecting: Promise<Client> | null = null;
  /** Why this route cannot listen, once found: asked once per process, not at every wait. */
  private refused: unknown = null;
  private readonly subs = new Map<string, Set<Sub>>();

  constructor(
    private readonly route: ListenRoute,
    private readonly newClient: (url: string) => Client,
  ) {}

  /** Opens a connection by this route and proves it reaches PostgreSQL itself; refuses otherwise. */
  async open(): Promise<Client> {
    if (this.refused) throw this.refused;
    try {
      return await this.check();
    } catch (err) {
      if (err instanceof LiError) this.refused = err;
      throw this.named(err);
    }
  }

  private async check(): Promise<Client> {
    const r = this.route;
    if (r.via === "store" && r.pooled === true)
      throw new LiError("unavailable", "the store's URL is a connection pooler (store_pooled: true): li does not LISTEN there, and polls", { reason: POOLED_REASON, how: "store_pooled" });
    const client = this.newClient(r.url);
    client.on("error", () => {});
    await client.connect();
    // A store that says it keeps sessions (store_pooled: false) is taken at its word.
    if (r.via === "store" && r.pooled === false) return client;
    let pid: number | null = null;
    try {
      pid = Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    const announced = (client as unknown as { processID?: number }).processID;
    if (pid === announced) return client;
    await client.end().catch(() => {});
    if (r.via === "store_listen")
      throw new LiError(
        "invalid_input",
        `${r.source} (${redactUrl(r.url)}) reaches a connection pooler or proxy, not PostgreSQL itself (the server's backend pid ${pid} is not the ${announced} announced at connection), so a LISTEN there would not be answered; point it at the database's direct host and port`,
        { field: r.source, url: redactUrl(r.url), reason: "store_listen_pooled", remedy: "name the database's direct host and port (docs/hosts.md, Behind a connection pooler)" },
      );
    throw new LiError("unavailable", `the store's URL reaches a connection pooler (the server's backend pid ${pid} is not the ${announced} announced at connection): li does not LISTEN there, and polls`, {
      reason: POOLED_REASON,
      how: "backend_pid",
    });
  }

  /** A listen URL that cannot be used is named as itself (without its password), not as the store. */
  private named(err: unknown): unknown {
    const r = this.route;
    if (r.via !== "store_listen" || err instanceof LiError || !pgFailure(err)) return err;
    const message = scrubSecret(String((err as Error).message), r.url);
    return new LiError("unavailable", `the listen connection ${redactUrl(r.url)} (${r.source}) cannot be used (${message}); check that it names the database's direct host and port, reachable from here, with credentials it accepts`, {
      field: r.source,
      url: redactUrl(r.url),
      code: (err as { code?: string }).code ?? null,
      reason: "store_listen_unavailable",
    });
  }

  /** Calls `onPayload` with each notification on `channel` until the returned function is called. */
  async subscribe(channel: string, onPayload: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>> {
    const sub: Sub = { onPayload, onLost };
    const client = await this.connection();
    let set = this.subs.get(channel);
    if (!set) {
      this.subs.set(channel, (set = new Set()));
      try {
        await client.query(`LISTEN ${channel}`);
      } catch (err) {
        this.subs.delete(channel);
        if (!this.subs.size) await this.end();
        throw err;
      }
    }
    set.add(sub);
    return async () => {
      const now = this.subs.get(channel);
      if (!now?.delete(sub) || now.size) return;
      this.subs.delete(channel);
      if (!this.subs.size) return this.end();
      await client.query(`UNLISTEN ${channel}`).catch(() => {});
    };
  }

  /** Ends the connection (nothing more is heard; no subscriber is told it was lost). */
  async end(): Promise<void> {
    const c = this.connecting;
    this.connecting = null;
    this.subs.clear();
    const client = await c?.catch(() => null);
    await client?.end().catch(() => {});
  }

  private connection(): Promise<Client> {
    if (this.connecting) return this.connecting;
    const opening: Promise<Client> = this.open().then((client) => {
      client.on("notification", (m) => {
        for (const s of this.subs.get(m.channel) ?? []) s.onPayload(m.payload ?? "");
      });
      const lost = () => {
        if (this.connecting !== opening) return;
        this.connecting = null;
        const all = [...this.subs.values()].flatMap((s) => [...s]);
        this.subs.clear();
        for (const s of all) s.onLost();
      };
      client.on("error", lost);
      client.on("end", lost);
      return client;
    });
    this.connecting = opening;
    opening.catch(() => {
      if (this.connecting === opening) this.connecting = null;
    });
    return opening;
  }
}
