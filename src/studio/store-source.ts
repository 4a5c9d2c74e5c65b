import fs from "node:fs";
import { lastEventId } from "../lifecycle/listing.js";
import { storeLocation } from "../lifecycle/locate.js";
import { changeStamp, openReaderStore } from "../lifecycle/open.js";
import { statePath } from "../lifecycle/paths.js";
import type { Store } from "../lifecycle/store.js";

/** How often a placeholder is swapped for a fresh look at a shared store that had no schema yet. */
const SHARED_RECHECK_MS = 1000;

/*
 * The studio's one connection to the store, opened read-only by the backend itself: SQLite's own
 * read-only mode (not a byte of state.db is written: no WAL switch, no schema), or a PostgreSQL
 * connection whose every transaction is read-only. Every change goes through a `li` subprocess
 * (actions.ts), so the dashboard is never a second write path. Until the first run creates and
 * initialises the store, reads answer from the empty placeholder.
 */
export class StoreSource {
  /** The opening or open store: shared, so concurrent requests never open two connections. */
  private store: Promise<Store> | null = null;
  /** A look for the real store behind the placeholder, shared by the requests that ask meanwhile. */
  private looking: Promise<Store> | null = null;
  private lookedAt = 0;
  private shared: boolean | undefined;

  async get(): Promise<Store> {
    if (!this.store) {
      const opening = (this.store = openReaderStore());
      this.lookedAt = Date.now();
      // A failed open is not kept: the next request tries again.
      opening.catch(() => {
        if (this.store === opening) this.store = null;
      });
    }
    const current = this.store;
    const store = await current;
    if (!store.placeholder || !this.mayHaveAppeared()) return store;
    this.lookedAt = Date.now();
    this.looking ??= this.lookAgain(current, store).finally(() => (this.looking = null));
    return this.looking;
  }

  /**
   * Opens the store afresh and keeps it only once it holds li's schema: while it is still empty
   * the placeholder stays, so its readers are not cut off by a swap that changes nothing.
   */
  private async lookAgain(current: Promise<Store>, placeholder: Store): Promise<Store> {
    const fresh = await openReaderStore();
    if (fresh.placeholder || this.store !== current) {
      await fresh.close();
      return placeholder;
    }
    this.store = Promise.resolve(fresh);
    // A request still reading the placeholder finishes first.
    setTimeout(() => void placeholder.close(), 5000).unref();
    return fresh;
  }

  /**
   * Whether the store may have come into being since the placeholder was opened: state.db
   * appearing is a file check; a shared store's schema can only be asked of its server, so it
   * is asked again at most once a second.
   */
  private mayHaveAppeared(): boolean {
    // Where the store lives is read once: the studio's get() runs on every request.
    this.shared ??= storeLocation().kind === "postgres";
    return this.shared ? Date.now() - this.lookedAt >= SHARED_RECHECK_MS : fs.existsSync(statePath());
  }

  /**
   * A number that moves on every commit by another connection: cheap to poll. SQLite's
   * data_version; where the backend has none (PostgreSQL), the newest audit row's id. Every
   * status change writes one, and on PostgreSQL li's writers take turns under one lock, so ids
   * become visible in the order they were taken: a poll cannot see id n+1 before id n.
   */
  async dataVersion(): Promise<number> {
    const store = await this.get();
    const stamp = await changeStamp(store);
    if (stamp !== null) return stamp;
    return store.placeholder ? -1 : lastEventId(store);
  }

  async close(): Promise<void> {
    const store = this.store;
    this.store = null;
    if (store) await (await store.catch(() => null))?.close();
  }
}
