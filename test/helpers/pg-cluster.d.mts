export const PG_HINT: string;
export function pgBinDir(): string | undefined;
export function freePort(): Promise<number>;
export function createDatabase(port: number | string): string;
export interface PgCluster {
  port: number;
  dir: string;
  /** A connection URL for `db` as the cluster's superuser (no password: the cluster trusts loopback). */
  url(db?: string): string;
  createDatabase(): string;
  restart(mode?: "immediate" | "fast"): void;
  /** restart without blocking the event loop: in-process clients see the outage. */
  restartAsync(mode?: "immediate" | "fast"): Promise<void>;
  /** An immediate stop, `ms` down, then a start: writes made meanwhile are refused. */
  outage(ms: number): Promise<void>;
  stop(): void;
}
export function startCluster(): Promise<PgCluster>;
