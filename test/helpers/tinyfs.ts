/**
 * A small tmpfs for the storage-fault suites, mounted when the file is loaded (so a suite can
 * decide which tests to register) and unmounted after its last test. Needs root; elsewhere, or
 * when mount fails, `available` is false and `reason` says why: the suite skips its tests, unless
 * LI_TEST_REQUIRE_TMPFS is set (as .ci/run sets it), where each of them fails saying why.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Home } from "./li.js";

export interface TinyFs {
  available: boolean;
  reason: string;
  dir: string;
  /** A fresh LI_HOME on the tmpfs; `extraEnv` is added to its environment. */
  home(extraEnv?: NodeJS.ProcessEnv): Home;
  /** Tops the file system up with a filler file until it is full, then gives back `slack` bytes. */
  fill(slack?: number): void;
  /** Removes the filler. */
  free(): void;
}

export function useTinyFs(sizeBytes: number): TinyFs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-tinyfs-"));
  const filler = path.join(dir, "filler");
  let available = false;
  let reason = "";
  if (process.getuid?.() !== 0) reason = "not root: cannot mount a tmpfs";
  else {
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes}`, "tmpfs", dir], { stdio: "pipe" });
      available = true;
    } catch (err: any) {
      reason = `mount -t tmpfs failed: ${String(err?.stderr ?? err?.message ?? err).trim()}`;
    }
  }
  let n = 0;
  afterAll(() => {
    if (available) {
      try {
        execFileSync("umount", [dir], { stdio: "pipe" });
      } catch {
        // A process a test left behind may still hold a file open: detach it instead.
        execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    available,
    reason,
    dir,
    home(extraEnv = {}) {
      const home = path.join(dir, `home-${++n}`);
      return { home, env: { ...process.env, LI_HOME: home, NODE_OPTIONS: "", ...extraEnv }, cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
    },
    fill(slack = 0) {
      const fd = fs.openSync(filler, "a");
      try {
        for (const chunk of [Buffer.alloc(256 * 1024), Buffer.alloc(4096), Buffer.alloc(512)]) {
          for (;;) {
            try {
              fs.writeSync(fd, chunk);
            } catch (err: any) {
              if (err?.code !== "ENOSPC") throw err;
              break;
            }
          }
        }
        if (slack > 0) fs.ftruncateSync(fd, Math.max(0, fs.fstatSync(fd).size - slack));
      } finally {
        fs.closeSync(fd);
      }
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
  };
}

/**
 * `test` when the tmpfs is there. Without it, `test.skip` with the reason printed once; under
 * LI_TEST_REQUIRE_TMPFS a test that fails with the reason instead, its body never run (on the
 * unmounted folder, fill() would fill the real disk).
 */
export function tinyFsTest(t: TinyFs): jest.It {
  if (t.available) return test;
  if (process.env.LI_TEST_REQUIRE_TMPFS) {
    const failing = (name: string, _fn?: unknown, timeout?: number) =>
      test(name, () => {
        throw new Error(`LI_TEST_REQUIRE_TMPFS is set and there is no tmpfs for this test: ${t.reason}`);
      }, timeout);
    return failing as unknown as jest.It;
  }
  console.log(`skipping storage-fault tests: ${t.reason}`);
  return test.skip;
}
