import fs from "node:fs";
import path from "node:path";
import { childProcess } from "../../packages.js";
import { liHome } from "../../lifecycle/paths.js";
import { which } from "../on-path.js";

/*
 * Whether this host can run a `workspace` sandbox (docs/sandbox.md): bubblewrap to build the
 * namespaces, socat to bridge the sandbox's network to li's proxy over a Unix socket (started
 * from outside through nsenter and perl), strace to
 * see what was refused, and user namespaces that bubblewrap can actually open (a kernel or a
 * container may forbid them). Asked once per process, and a yes is remembered on the host
 * ($LI_HOME/sandbox-support.json) for as long as what it rests on is unchanged: bwrap's path and
 * mtime, the boot, the user and the kernel's user-namespace switches. A no is never remembered.
 */

export type SandboxSupport = { ok: true; mechanism: string } | { ok: false; missing: string; remedy: string };

export const SANDBOX_PACKAGES = "bubblewrap socat strace";
const APT = `apt-get install ${SANDBOX_PACKAGES}`;

const MECHANISM = "bubblewrap+strace+proxy";

/** What the sandbox's launcher starts with, for strace alone to keep (run.ts drops them from everything else): bubblewrap must grant them. */
export const TRACER_CAPS = ["--cap-add", "CAP_SYS_PTRACE", "--cap-add", "CAP_SETPCAP"];
/** A remembered yes from a probe that asked less is asked again. */
const PROBE_VERSION = "2";

let cached: SandboxSupport | null = null;

/** On PATH, as the worker will find it. */
export const onPath = (bin: string): string | null => which(bin, process.env.PATH);

export function sandboxSupport(): SandboxSupport {
  if (cached) return cached;
  cached = probe();
  return cached;
}

const read = (p: string): string => {
  try {
    return fs.readFileSync(p, "utf8").trim();
  } catch {
    return "";
  }
};

/** What a yes rests on; a change to any of it asks bwrap again. */
function supportKey(bwrap: string): string {
  let stamp = "";
  try {
    const real = fs.realpathSync(bwrap);
    stamp = `${real}@${fs.statSync(real).mtimeMs}`;
  } catch {}
  const k = "/proc/sys/kernel/";
  return [PROBE_VERSION, stamp, read(`${k}random/boot_id`), process.getuid?.() ?? "", read(`${k}unprivileged_userns_clone`), read("/proc/sys/user/max_user_namespaces"), read(`${k}apparmor_restrict_unprivileged_userns`)].join("|");
}

/** Where a passed check is remembered; null when li has no home here (li doctor still asks bwrap). */
function memoFile(): string | null {
  try {
    return path.join(liHome(), "sandbox-support.json");
  } catch {
    return null;
  }
}

/** A sandbox that did not start (its provider never ran): the next run asks bwrap again. */
export function forgetSupport(): void {
  try {
    const memo = memoFile();
    if (memo) fs.rmSync(memo, { force: true });
  } catch {}
}

function probe(): SandboxSupport {
  // A test's stand-in for a host that cannot sandbox (never set by li itself).
  const played = process.env.LI_TEST_SANDBOX_UNAVAILABLE;
  if (played) return { ok: false, missing: played, remedy: `${APT} (this host plays one without ${played}: LI_TEST_SANDBOX_UNAVAILABLE is set)` };
  if (process.platform !== "linux") return { ok: false, missing: "linux", remedy: "the workspace sandbox is built on Linux namespaces (bubblewrap); run on a Linux host" };
  // nsenter and perl start the bridges from outside, in the sandbox's network namespace (bridges.ts).
  for (const [bin, pkg] of [["bwrap", "bubblewrap"], ["socat", "socat"], ["strace", "strace"], ["setpriv", "util-linux"], ["nsenter", "util-linux"], ["perl", "perl-base"]] as const)
    if (!onPath(bin)) return { ok: false, missing: pkg, remedy: `${pkg === "util-linux" || pkg === "perl-base" ? `apt-get install ${pkg}` : APT} (${bin} is not on PATH)` };
  const key = supportKey(onPath("bwrap")!);
  const memo = memoFile();
  if (memo && read(memo) === JSON.stringify({ ok: key })) return { ok: true, mechanism: MECHANISM };
  const r = childProcess().spawnSync("bwrap", ["--unshare-all", "--as-pid-1", "--die-with-parent", "--cap-drop", "ALL", ...TRACER_CAPS, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"], { encoding: "utf8", timeout: 10_000 });
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0];
    return {
      ok: false,
      missing: "user namespaces",
      remedy: `bubblewrap cannot open its namespaces here (${why}); enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, or an AppArmor profile allowing bwrap), or run as root with CAP_SYS_ADMIN and CAP_SETFCAP`,
    };
  }
  try {
    if (memo) fs.writeFileSync(memo, JSON.stringify({ ok: key }), { mode: 0o600 });
  } catch {}
  return { ok: true, mechanism: MECHANISM };
}
