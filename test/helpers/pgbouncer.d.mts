export declare const PGBOUNCER_HINT: string;
export declare function pgbouncerBin(): string | undefined;
export declare function startPgbouncer(serverPort: number, opts?: { poolSize?: number; queryWaitTimeout?: number }): Promise<{ port: number; dir: string; log: string; url(direct: string): string; stop(): void }>;
