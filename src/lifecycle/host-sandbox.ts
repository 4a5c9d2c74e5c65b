import { dbOf } from "./db/handle.js";
import type { Store } from "./store.js";

/*
 * Whether each host can sandbox a run (issue 38), as its daemon found at its last registration:
 * a row of `meta` per host (host_sandbox:NAME, JSON), so no schema step is needed. `li host
 * list` shows it; the host's own worker still decides each run.
 */

export type HostSandbox = { ok: true; mechanism: string; checked_at: string } | { ok: false; missing: string; remedy: string; checked_at: string };

const PREFIX = "host_sandbox:";

export async function recordHostSandbox(store: Store, host: string, support: { ok: true; mechanism: string } | { ok: false; missing: string; remedy: string }): Promise<void> {
  const value = JSON.stringify({ ...support, checked_at: new Date().toISOString() });
  await dbOf(store).run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [PREFIX + host, value]);
}

/** Every host's last answer, by host name; a value li cannot read is left out. */
export async function hostSandboxes(store: Store): Promise<Map<string, HostSandbox>> {
  const rows = await dbOf(store).all<{ key: string; value: string }>("SELECT key, value FROM meta WHERE key LIKE ?", [PREFIX + "%"]);
  const out = new Map<string, HostSandbox>();
  for (const r of rows) {
    try {
      out.set(r.key.slice(PREFIX.length), JSON.parse(r.value));
    } catch {}
  }
  return out;
}

export async function forgetHostSandbox(store: Store, host: string): Promise<void> {
  await dbOf(store).run("DELETE FROM meta WHERE key = ?", [PREFIX + host]);
}
