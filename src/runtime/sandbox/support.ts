import fs from "node:fs";
import path from "node:path";

/*
 * STAND-IN (wt-sbxsurface) for the check wt-sbxcore owns; the merge takes its version.
 * Whether this host can sandbox a run: bubblewrap and socat on PATH, and user namespaces.
 */

export type SandboxSupport = { ok: true; mechanism: string } | { ok: false; missing: string; remedy: string };

let cached: SandboxSupport | undefined;

const onPath = (name: string) => (process.env.PATH ?? "").split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, name)));

export function sandboxSupport(): SandboxSupport {
  if (cached) return cached;
  // Test seam: plays a host that cannot sandbox (the product never sets it).
  const forced = process.env.LI_TEST_SANDBOX_UNAVAILABLE;
  if (forced) return (cached = { ok: false, missing: forced, remedy: "apt-get install bubblewrap socat" });
  if (!onPath("bwrap")) return (cached = { ok: false, missing: "bubblewrap", remedy: "apt-get install bubblewrap socat" });
  if (!onPath("socat")) return (cached = { ok: false, missing: "socat", remedy: "apt-get install socat" });
  try {
    if (fs.readFileSync("/proc/sys/user/max_user_namespaces", "utf8").trim() === "0")
      return (cached = { ok: false, missing: "user namespaces", remedy: "sysctl -w user.max_user_namespaces=15000" });
  } catch {}
  return (cached = { ok: true, mechanism: "bubblewrap" });
}
