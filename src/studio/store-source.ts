import fs from "node:fs";
import { changeStamp, openReaderStore } from "../lifecycle/open.js";
import { statePath } from "../lifecycle/paths.js";
import type { Store } from "../lifecycle/store.js";

/*
 * The studio's one connection to state.db, opened read-only by SQLite itself: not a byte of
 * the file is written (no WAL switch, no schema), and every change goes through a `li`
 * subprocess (actions.ts), so the dashboard is never a second write path. Until the first run
 * creates and initialises state.db, reads answer from the empty placeholder.
 */
export class StoreSource {
  /** The opening or open store: shared, so concurrent requests never open two connections. */
  private store: Promise<Store> | null = null;

  async get(): Promise<Store> {
    if (this.store && (await this.store).placeholder && fs.existsSync(statePath())) await this.close();
    if (!this.store) {
      const opening = (this.store = openReaderStore());
      // A failed open is not kept: the next request tries again.
      opening.catch(() => {
        if (this.store === opening) this.store = null;
      });
    }
    return this.store;
  }

  /** A number that moves on every commit by another connection (SQLite's data_version): cheap to poll. */
  async dataVersion(): Promise<number> {
    return (await changeStamp(await this.get())) ?? -1;
  }

  async close(): Promise<void> {
    const store = this.store;
    this.store = null;
    if (store) await (await store.catch(() => null))?.close();
  }
}
