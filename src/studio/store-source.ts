import fs from "node:fs";
import { openStore, openStoreForRead } from "../lifecycle/open.js";
import { statePath } from "../lifecycle/paths.js";
import type { Store } from "../lifecycle/store.js";

/*
 * The studio's one connection to state.db, which cannot write: every change goes through a
 * `li` subprocess (actions.ts), so the dashboard is never a second write path. Until the first
 * run creates state.db, reads answer from the empty placeholder and nothing is created.
 */
export class StoreSource {
  private store: Store | null = null;

  get(): Store {
    if (this.store?.placeholder && fs.existsSync(statePath())) this.close();
    if (!this.store) {
      const s = fs.existsSync(statePath()) ? openStore({ readOnlyFallback: true }) : openStoreForRead();
      // query_only: a write by mistake (a reap, a migration) fails instead of happening.
      if (!s.placeholder) s.db.pragma("query_only = ON");
      s.terminalHook = null;
      this.store = s;
    }
    return this.store;
  }

  /** SQLite's count of commits by other connections: cheap to poll, and it moves on every write li makes. */
  dataVersion(): number {
    return this.get().db.pragma("data_version", { simple: true }) as number;
  }

  close(): void {
    this.store?.close();
    this.store = null;
  }
}
