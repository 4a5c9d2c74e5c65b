/**
 * The detached terminal-notify drainer: `node drain-main.cjs`. Delivers due outbox rows one
 * at a time, sleeps through retries that fall due soon, and exits when nothing is due.
 */
import { openStore } from "../../lifecycle/open.js";
import { dbClock } from "../../lifecycle/leases.js";
import { attempt } from "../../lifecycle/notify/deliver.js";
import { receiveStoreSecrets } from "../../lifecycle/store-handoff.js";
import { claimDue, finishAttempt, MAX_DELAY_MS, nextDueMs } from "../../lifecycle/notify/outbox.js";

process.umask(0o077);

/** A retry further out than this is left to the next drainer (any terminal transition or `li dispatch retry` starts one). */
const HORIZON_MS = MAX_DELAY_MS + 5_000;
/** An upper bound on one drainer's life, so a wedged handler cannot keep it forever. */
const MAX_LIFETIME_MS = 15 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  receiveStoreSecrets();
  const store = await openStore();
  const deadline = Date.now() + MAX_LIFETIME_MS;
  try {
    while (Date.now() < deadline) {
      // Leases and due times by the store's clock: drainers on several hosts share one outbox, and
      // one whose clock ran ahead would take over a delivery another is still making.
      const claim = await claimDue(store, (await dbClock(store)).getTime());
      if (claim) {
        const result = await attempt(claim.target, claim.row.payload, { delivery_id: claim.row.id, attempt: claim.attempt });
        await finishAttempt(store, claim, result, (await dbClock(store)).getTime());
        continue;
      }
      const due = await nextDueMs(store);
      if (due === null || due - Date.now() > HORIZON_MS) return;
      await sleep(Math.max(10, due - Date.now()));
    }
  } finally {
    await store.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`li drainer: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
