import { endRun } from "./pg-worker.mjs";

export default async function teardown() {
  endRun();
}
