// The postgres project's cluster: started once for the run, its port handed to the test workers
// through the environment (they start after global set-up). Each test home gets a database of
// its own in it (tempHome in test/helpers/li.ts).
import { PG_HINT, pgBinDir, startCluster } from "./pg-cluster.mjs";

export default async function setup() {
  if (!pgBinDir()) throw new Error(PG_HINT);
  const cluster = await startCluster();
  process.env.LI_TEST_PG_PORT = String(cluster.port);
  globalThis.__liPgCluster = cluster;
}
