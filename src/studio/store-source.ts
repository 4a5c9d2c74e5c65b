import fs from "node:fs";
import { LiError } from "../errors.js";
import { placeholderStore } from "../lifecycle/open.js";
import { checkHome, statePath } from "../lifecycle/paths.js";
import { openReadOnly } from "../lifecycle/read-only.js";
import { Store } from "../lifecycle/store.js";

/*
 * The studio's one connection to state.db, opened read-only by SQLite itself: not a byte of
 * the file is written (no WAL switch, no schema), and every change goes through a `li`
 * subprocess (actions.ts), so the dashboard is never a second write path. Until the first run
 * creates and initialises state.db, reads answer from the empty placeholder.
 */
export class StoreSource {
  private store: Store | null = null;

  get(): Store {
    if (this.store?.placeholder && fs.existsSync(statePath())) this.close();
    if (!this.store) this.store = this.open();
    return this.store;
  }

  private open(): Store {
    checkHome();
    const file = statePath();
    if (!fs.existsSync(file)) return placeholderStore();
    const db = openReadOnly(file);
    if (!db) throw new LiError("unavailable", `state.db cannot be read without writing (the disk is full and its WAL has frames no index shows); free some space`, { path: file });
    const store = new Store(db);
    // A file another li is creating right now: read it as empty until its schema is in.
    if (store.schemaVersion() === 0) {
      store.close();
      return placeholderStore();
    }
    store.checkVersion(file);
    return store;
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
