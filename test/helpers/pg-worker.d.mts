import type { PgCluster } from "./pg-cluster.mjs";
export const TEMPLATE: string;
export function workerCluster(): PgCluster;
export function beginRun(): void;
export function endRun(run?: string): void;
export function workerPooler(): { port: number; url(direct: string): string };
