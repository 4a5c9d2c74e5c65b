/**
 * The detached worker: `node worker-main.cjs <entity-id>`. It supervises one entity and
 * reports every status change through the lifecycle transition function. Its stdio goes
 * nowhere: what it has to say about itself goes to runs/<id>/worker.log.
 */
import { openStore } from "../../lifecycle/open.js";
import { queueActive } from "../../lifecycle/queued.js";
import { receiveStoreSecrets } from "../../lifecycle/store-handoff.js";
import type { Store } from "../../lifecycle/store.js";
import { shipConsole } from "./console-ship.js";
import { persist } from "./persist.js";
import { errorText, workerLog } from "./worker-log.js";
import { lendCapturer } from "../worktree/lend.js";
import { lendHolder } from "../sandbox/lend-held.js";

// Kill and timeout signal the whole group; the worker outlives SIGTERM so it can record
// how its child ended (the terminal floor refuses that write if kill already recorded it).
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => {});

const WORKERS: Record<string, () => Promise<{ run(store: Store, id: string): Promise<void> }>> = {
  invocation: () => import("./invocation-worker.js"),
  session: () => import("./session-worker.js"),
  play: () => import("./play-worker.js"),
};

/** How long an ending worker keeps trying to ship the rest of its console. */
const SHIP_END_MS = 5000;

const id = process.argv[2];
const log = workerLog(id ?? "(no id)", id ? undefined : null);

async function main(): Promise<void> {
  // Before anything reads LI_STORE: the store's address comes over a pipe, not the environment.
  receiveStoreSecrets();
  // A session's supervisor reaps its steps: an isolated step whose worker died owes its change.
  lendCapturer();
  lendHolder();
  // Opening can write (the WAL index), so a full disk at start is retried like any write.
  const store = await persist("opening state.db", () => openStore(), log);
  try {
    const entity = id ? await store.get(id) : undefined;
    if (!entity) {
      process.exitCode = 2;
      return;
    }
    const load = WORKERS[entity.kind];
    if (!load) throw new Error(`no worker for kind ${entity.kind}`);
    // On a shared store, other hosts read the console from there (issue 22).
    const shipper = shipConsole(store, entity, log);
    try {
      await (await load()).run(store, entity.id);
    } finally {
      await shipper?.drain(SHIP_END_MS, true);
    }
    // The slot this run held is free now: start whatever waits in line for it.
    if (await queueActive(store)) await (await import("../host/queue.js")).promoteQuietly(store);
  } finally {
    await store.close();
  }
}

main().catch((err) => {
  log(`failed: ${errorText(err)}${err?.stack ? `\n${err.stack}` : ""}`);
  process.stderr.write(`li worker: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
