export const PG_HINT: string;
export function pgBinDir(): string | undefined;
export function freePort(): Promise<number>;
export function freePortSync(): number;
/** A new database in the cluster on `port`: empty, or a copy of `template`. */
export function createDatabase(port: number | string, opts?: { template?: string }): string;
export interface PgCluster {
  port: number;
  dir: string;
  /** A connection URL for `db` as the cluster's superuser (no password: the cluster trusts loopback). */
  url(db?: string): string;
  /** A new database; its URL. Empty, or in a worker's cluster with `migrated`, a copy of one li has migrated. */
  createDatabase(opts?: { migrated?: boolean }): string;
  restart(mode?: "immediate" | "fast"): void;
  /** restart without blocking the event loop: in-process clients see the outage. */
  restartAsync(mode?: "immediate" | "fast"): Promise<void>;
  /** An immediate stop, `ms` down, then a start: writes made meanwhile are refused. `whileDown` runs once the server is down, before the `ms` begin. */
  outage(ms: number, whileDown?: () => unknown): Promise<void>;
  stop(): void;
}
export function launchCluster(port: number): { port: number; dir: string };
export function stopClusterAt(dir: string): void;
export function clusterAt(at: { port: number; dir: string }): PgCluster;
export function startCluster(): Promise<PgCluster>;
