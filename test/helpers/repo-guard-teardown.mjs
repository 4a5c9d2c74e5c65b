import { guardEnd } from "./repo-guard.mjs";

export default async function teardown() {
  guardEnd();
}
