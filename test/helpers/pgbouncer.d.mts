export declare const PGBOUNCER_HINT: string;
export declare function pgbouncerBin(): string | undefined;
export interface PgbouncerAt { port: number; dir: string; log: string; pidfile: string }
export declare function launchPgbouncer(serverPort: number, port: number, opts?: { poolSize?: number; queryWaitTimeout?: number }): PgbouncerAt;
export declare function stopPgbouncerAt(at: PgbouncerAt): void;
export declare function pooledUrl(serverPort: number, port: number, direct: string): string;
export declare function startPgbouncer(serverPort: number, opts?: { poolSize?: number; queryWaitTimeout?: number }): Promise<PgbouncerAt & { url(direct: string): string; stop(): void }>;
