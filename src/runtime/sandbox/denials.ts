/*
 * What a sandboxed run was refused, as its record keeps it (spec.sandbox_denials, shown by li job
 * status as `sandbox.denials`): writes and reads by path, connections by host, each with a count.
 * The first MAX_ENTRIES distinct entries are kept; later ones are only counted (`dropped`), so a
 * run that hammers a path cannot grow its record without bound.
 */

export const MAX_ENTRIES = 100;

export interface SandboxDenials {
  writes: { path: string; count: number }[];
  reads: { path: string; count: number }[];
  hosts: { host: string; count: number }[];
  /** Every refusal seen, kept or not. */
  total: number;
  /** Refusals of entries past the first MAX_ENTRIES. */
  dropped: number;
}

export class DenialLog {
  private writes = new Map<string, number>();
  private reads = new Map<string, number>();
  private hosts = new Map<string, number>();
  private total = 0;
  private dropped = 0;

  add(kind: "write" | "read" | "host", key: string): void {
    this.total++;
    const map = kind === "write" ? this.writes : kind === "read" ? this.reads : this.hosts;
    const seen = map.get(key);
    if (seen !== undefined) map.set(key, seen + 1);
    else if (this.writes.size + this.reads.size + this.hosts.size < MAX_ENTRIES) map.set(key, 1);
    else this.dropped++;
  }

  get count(): number {
    return this.total;
  }

  result(): SandboxDenials {
    const list = <K extends string>(m: Map<string, number>, k: K) => [...m].map(([v, count]) => ({ [k]: v, count }) as Record<K, string> & { count: number });
    return { writes: list(this.writes, "path"), reads: list(this.reads, "path"), hosts: list(this.hosts, "host"), total: this.total, dropped: this.dropped };
  }
}
