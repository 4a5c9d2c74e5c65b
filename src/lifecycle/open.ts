import { notifyHook } from "./notify/hook.js";
import { Store } from "./store.js";

/*
 * The composition root of the lifecycle store: opens it and hands it its terminal hook, so the
 * store itself never depends on terminal-notify (which depends back on the store).
 */

export function openStore(opts: { migrating?: boolean } = {}): Store {
  const store = Store.open(opts);
  store.terminalHook = notifyHook;
  return store;
}
