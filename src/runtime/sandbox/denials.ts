/*
 * What a sandboxed run was refused, as its record keeps it (spec.sandbox_denials, shown by li job
 * status as `sandbox.denials`): writes and reads by path, connections by host, each with a count.
 * Refusals on protected places (protected.ts: credentials, git metadata, provider configuration,
 * li's home, files that run code) are named up to MAX_PROTECTED distinct entries, never displaced
 * by other refusals; the first MAX_ENTRIES distinct other entries are kept. Past either, a
 * refusal is only counted (`dropped`), so a run that hammers a path cannot grow its record
 * without bound, nor hide its real attempts behind harmless ones.
 */

export const MAX_ENTRIES = 100;
export const MAX_PROTECTED = 1000;

export interface SandboxDenials {
  writes: { path: string; count: number }[];
  reads: { path: string; count: number }[];
  hosts: { host: string; count: number }[];
  /** Calls a limit refused (docs/sandbox.md#limits): a fork past pids (EAGAIN), a write past tmp (ENOSPC) by its mount; only when any was. */
  limits?: { limit: string; path?: string; count: number }[];
  /** Credential files the run changed in a way that is no token refresh, not written back to the person's (home-view.ts); only when any was. */
  credentials?: { path: string; reason: string; detail: string }[];
  /** Every refusal seen, kept or not. */
  total: number;
  /** Refusals of entries past the caps. */
  dropped: number;
}

export class DenialLog {
  private writes = new Map<string, number>();
  private reads = new Map<string, number>();
  private hosts = new Map<string, number>();
  /** Few keys (pids, one per sized mount): never capped. */
  private limits = new Map<string, number>();
  /** At most one per credential file of the provider's: never capped. */
  private credentials: { path: string; reason: string; detail: string }[] = [];
  private total = 0;
  private dropped = 0;
  private kept = { protected: 0, other: 0 };

  constructor(private readonly isProtected: (path: string) => boolean = () => false) {}

  add(kind: "write" | "read" | "host" | "limit", key: string): void {
    this.total++;
    if (kind === "limit") return void this.limits.set(key, (this.limits.get(key) ?? 0) + 1);
    const map = kind === "write" ? this.writes : kind === "read" ? this.reads : this.hosts;
    const seen = map.get(key);
    if (seen !== undefined) return void map.set(key, seen + 1);
    const which = kind !== "host" && this.isProtected(key) ? "protected" : "other";
    if (this.kept[which] < (which === "protected" ? MAX_PROTECTED : MAX_ENTRIES)) {
      this.kept[which]++;
      map.set(key, 1);
    } else this.dropped++;
  }

  /** A credential write-back refused (home-view.ts's writeBack). */
  credential(r: { path: string; reason: string; detail: string }): void {
    this.total++;
    this.credentials.push(r);
  }

  get count(): number {
    return this.total;
  }

  result(): SandboxDenials {
    const list = <K extends string>(m: Map<string, number>, k: K) => [...m].map(([v, count]) => ({ [k]: v, count }) as Record<K, string> & { count: number });
    const limits = [...this.limits].map(([k, count]) => (k.startsWith("tmp:") ? { limit: "tmp", path: k.slice(4), count } : { limit: k, count }));
    return { writes: list(this.writes, "path"), reads: list(this.reads, "path"), hosts: list(this.hosts, "host"), ...(limits.length ? { limits } : {}), ...(this.credentials.length ? { credentials: this.credentials } : {}), total: this.total, dropped: this.dropped };
  }
}
