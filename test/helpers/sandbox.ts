import { execFileSync } from "node:child_process";

/*
 * Whether this machine can run the workspace sandbox's suites: bubblewrap on PATH. Without it they
 * skip, saying so, unless LI_TEST_REQUIRE_SANDBOX is set (as .ci/run does), where the absence is a
 * failure: CI would otherwise stay green having contained nothing.
 */
export const canSandbox: boolean = (() => {
  try {
    execFileSync("bwrap", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const INSTALL = "apt-get install bubblewrap socat strace";

/** `describe` (or the suite's own describe, e.g. describePostgres) when the sandbox can run here, else a skip that says why. */
export function sandboxSuite(file: string, describeIt: (name: string, fn: () => void) => void = describe): (name: string, fn: () => void) => void {
  if (canSandbox) return describeIt;
  if (process.env.LI_TEST_REQUIRE_SANDBOX) throw new Error(`LI_TEST_REQUIRE_SANDBOX is set but bwrap is not on PATH: ${INSTALL}`);
  console.warn(`${file} skipped: bubblewrap (bwrap) is not on PATH; ${INSTALL}`);
  return (name, fn) => describe.skip(name, fn);
}
