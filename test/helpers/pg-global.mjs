// Global set-up: the run's folder in which each jest worker records the PostgreSQL cluster it
// starts on first use (test/helpers/pg-worker.mjs); workers start after this and inherit it.
import { beginRun } from "./pg-worker.mjs";

export default async function setup() {
  beginRun();
}
