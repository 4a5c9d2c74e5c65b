export default async function teardown() {
  globalThis.__liPgCluster?.stop();
}
