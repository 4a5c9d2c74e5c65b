import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { Readable } from "node:stream";
import type { Entity } from "../../lifecycle/store.js";
import { liHome } from "../../lifecycle/paths.js";
import { sandboxSettings } from "../../config/sandbox-settings.js";
import { DenialLog, type SandboxDenials } from "./denials.js";
import { sandboxLayout, type GitLayout } from "./layout.js";
import { providerHosts } from "./hosts.js";
import { startProxy, type Proxy } from "./proxy.js";
import { TraceReader } from "./trace.js";
import { APPROVAL_SOCKET_ENV } from "../approvals/protocol.js";
import { mark } from "./marks.js";
import { forgetSupport, TRACER_CAPS } from "./support.js";
import { repoOf } from "./repo-of.js";
import { endpointKeyVars, GATEWAY_PORT, modelKeyVars, ownKeyVars } from "../gateway/plan.js";
import { hostSocketVars } from "../../config/sandbox-home.js";
import { homeView, ownPrograms, prepareState, writeBack } from "./home-view.js";
import { NO_REACH, type StoreReach } from "./store-reach.js";
import { protectedPlaces } from "./protected.js";
import type { HeldFiles } from "../../lifecycle/sandbox-held.js";
import { execOnlyBinds, execOnlyDir } from "./exec-only.js";
import { programsOf, sandboxPrograms } from "./exec-only-programs.js";
import { limitedLauncher } from "./launcher.js";
import { inCgroup } from "./cgroup-launch.js";
import type { RunLimits } from "./limits-run.js";
import { failClosed, startBridges, type Bridges } from "./bridges.js";
import { refuseHomeTree } from "./tree-guard.js";

/*
 * One provider process inside a workspace sandbox (docs/sandbox.md): bubblewrap with every
 * namespace of its own (pid included, --die-with-parent), socat bridging its loopback ports to the
 * worker's proxy and gateway from outside (bridges.ts), strace logging the calls that failed, and a
 * launcher line naming the provider's pid. When that pid exits, the worker kills bubblewrap, and
 * with it everything the agent left running; the provider's own exit status is what the run
 * reports. li's processes inside (the provider, its node, strace) are non-dumpable, out of the
 * agent's reach (exec-only.ts).
 */

/** The proxy's port on the sandbox's own loopback. */
const PROXY_PORT = 3128;
/**
 * Where li's approval socket is inside: /run is the sandbox's own, so no path of another run shows
 * there. The proxy's and the gateway's sockets are not shown at all: their bridges run outside and
 * connect by the host path (bridges.ts).
 */
const INNER_APPROVALS = "/run/li/approvals.sock";

/** A provider that never started: its error on the next tick, as a spawn's would come. */
function failedChild(err: Error): ProviderChild {
  const child = new EventEmitter() as EventEmitter & ProviderChild;
  child.stdout = null;
  setImmediate(() => child.emit("error", err));
  return child;
}

/** The host pid of a live (not zombie) process of pid `pid` inside the pid namespace `ns`, read from /proc outside; `known` is checked alone first. */
function hostPidOf(ns: string, pid: number, known: number | null = null): number | null {
  for (const p of known !== null ? [String(known)] : fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, "latin1");
      const inner = /^NSpid:\s+([\d\s]+)$/m.exec(status)?.[1].trim().split(/\s+/);
      if (!inner || Number(inner[inner.length - 1]) !== pid || inner.length < 2) continue;
      if (/^State:\s+[ZX]/m.test(status)) continue;
      if (fs.readlinkSync(`/proc/${p}/ns/pid`) === ns) return Number(p);
    } catch {}
  }
  return null;
}

export interface SandboxResult {
  mode: "workspace";
  denials: SandboxDenials;
  /** A checkout run's files that run code which its agent created, moved to `<run dir>/sandbox/held` (held.ts). */
  held?: HeldFiles;
}

/** What the worker needs of a provider process: its stdout, its start error and its end. */
export interface ProviderChild {
  stdout: Readable | null;
  on(event: "error", fn: (err: Error) => void): this;
  on(event: "exit", fn: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export interface Sandbox {
  spawn(argv: string[], opts: { stdio: StdioOptions; env: NodeJS.ProcessEnv }): ProviderChild;
  /** The refusals so far; call after the provider's exit. */
  result(): SandboxResult;
  /** Stops the proxy and removes the run's scratch (its TMPDIR). */
  close(): void;
  /** Called once when the sandbox broke before or under its provider (a bridge that never came up or died): the run ends sandbox_failed, never runs unbridged. */
  onFailure(fn: (detail: { error: string }) => void): void;
}

/** The run's tree, and the git directory the agent may commit through. */
async function treeOf(e: Entity, cwd: string): Promise<{ tree: string; git: GitLayout | null }> {
  const iso = e.spec.isolation;
  if (iso?.worktree && iso.repo) {
    const { gitText } = await import("../worktree/git.js");
    const { registeredGitDir } = await import("../worktree/tree-git.js");
    const gitDir = await registeredGitDir(iso.repo, iso.worktree);
    const common = await gitText(["rev-parse", "--path-format=absolute", "--git-common-dir"], iso.repo);
    if (!gitDir) return { tree: iso.worktree, git: null };
    // Its commits go to a git place of its own, brought in at capture once git has checked them.
    const { prepareAgentGit } = await import("../worktree/agent-git.js");
    const own = iso.branch ? await prepareAgentGit({ root: iso.repo, worktree: iso.worktree, gitDir, common, branch: iso.branch }) : null;
    return { tree: iso.worktree, git: { common, gitDir, branch: iso.branch ?? null, worktree: iso.worktree, own } };
  }
  const known = repoOf(cwd);
  if (known === "none") return { tree: cwd, git: null };
  if (known) return { tree: known.top, git: { common: known.common, gitDir: known.common, branch: known.branch, worktree: null } };
  const { gitTextLight } = await import("../worktree/git.js");
  try {
    const [top, common, head] = (await gitTextLight(["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--symbolic-full-name", "HEAD"], cwd)).split("\n");
    return { tree: top, git: { common, gitDir: common, branch: head?.startsWith("refs/heads/") ? head.slice("refs/heads/".length) : null, worktree: null } };
  } catch {
    return { tree: cwd, git: null };
  }
}

/** `gateway`: the run's model gateway socket, when its calls are metered (its model host is then not allowed directly). */
export async function prepareSandbox(e: Entity, cwd: string, provider: string, env: NodeJS.ProcessEnv, store: StoreReach = NO_REACH, gateway: string | null = null, limits: RunLimits | null = null): Promise<Sandbox> {
  mark("sandbox-start");
  const own = sandboxSettings(e.spec.settings_dir ?? cwd);
  // li's store is out of reach whatever the settings say: its sockets hidden, its port refused.
  // The exec-only copies' folder is hidden too (under $LI_HOME it already is).
  const settings = { ...own, deny_read: [...own.deny_read, ...store.sockets, execOnlyDir()] };
  // li's processes inside are non-dumpable (exec-only.ts): a copy that cannot be made (a full disk) stops the run here.
  const guardedPrograms = sandboxPrograms([process.execPath], provider, env.PATH);
  const execOnly = execOnlyBinds(guardedPrograms);
  const scratch = path.join(e.run_dir!, "sandbox");
  fs.mkdirSync(scratch, { recursive: true, mode: 0o700 });
  const tmpDir = fs.mkdtempSync(path.join(scratch, "tmp-"));
  const unreadable = path.join(scratch, "unreadable");
  fs.writeFileSync(unreadable, "", { mode: 0o000 });
  // In the run's own 0700 directory however deep (unix-socket.ts), shown inside at a short fixed path.
  const sock = path.join(scratch, "proxy.sock");
  // Which refusals are always named (protected.ts): known once the layout is.
  let guarded: (p: string) => boolean = () => false;
  const denials = new DenialLog((p) => guarded(p));
  // A metered run's model host is reached through the gateway only: a direct CONNECT is refused and recorded.
  const hosts = [...(gateway ? [] : providerHosts(provider, env)), ...settings.allow_hosts];
  // git runs while the proxy starts listening.
  const treeKnown = treeOf(e, cwd);
  treeKnown.catch(() => {});
  const proxy: Proxy = await startProxy(sock, hosts, (h) => denials.add("host", h), store.closed, gateway ? { [`127.0.0.1:${GATEWAY_PORT}`]: gateway } : {});
  mark("proxy-listening");
  const { tree, git } = await treeKnown;
  const home = env.HOME || os.homedir();
  try {
    refuseHomeTree(tree, home, !!git?.worktree);
  } catch (err) {
    proxy.close();
    fs.rmSync(tmpDir, { recursive: true, force: true });
    throw err;
  }
  // A checkout run's files that run code when opened stay as they are; an isolated run's change to
  // them is marked instead. A journal owes the hold of the ones its agent creates (held.ts).
  const hold = git?.worktree ? null : await import("./held.js");
  const marked = hold ? hold.startHold(e.run_dir!, tree, !!git) : [];
  mark("tree-known");
  // The home's allow-list and the provider's private state directory (home-view.ts).
  const view = homeView({ home, tree, provider, env, settings });
  const privateState = prepareState(view, scratch);
  const layout = sandboxLayout({
    tree,
    tmpDir,
    provider,
    env,
    home,
    liHome: liHome(),
    // li's own scripts and node run the mock providers, wherever li is installed.
    readable: [path.join(e.run_dir!, "prompt.txt"), ...ownPrograms()],
    // The approval channel's socket (approvals: ask), in the run's directory; the only one shown inside.
    channels: env[APPROVAL_SOCKET_ENV] ? [[env[APPROVAL_SOCKET_ENV]!, INNER_APPROVALS]] : [],
    reopened: [],
    unreadable,
    settings,
    git,
    marked,
    view,
    privateState,
    tmpSize: limits?.tmpSize ?? null,
  });
  guarded = protectedPlaces([liHome(), ...layout.hidden, ...(git ? [git.common, git.gitDir] : []), env.CLAUDE_CONFIG_DIR ?? "", env.CODEX_HOME ?? "", env.GEMINI_CLI_HOME ?? ""], env.HOME || os.homedir());
  let gone: (pid: number) => boolean = () => false;
  const reader = new TraceReader({ cwd, writable: layout.writable, readOnly: layout.readOnly, hidden: layout.hidden, private: layout.private, quiet: layout.quiet, proxyPort: PROXY_PORT, gatewayPort: gateway ? GATEWAY_PORT : undefined, gone: (pid) => gone(pid), sized: limits?.tmpSize ? [tmpDir, ...layout.private] : [] }, denials);
  let held: HeldFiles | null | undefined;
  let bridges: Bridges | null = null;
  const cleanup = () => {
    bridges?.stop();
    // Once the sandbox is gone: what the agent created that runs code leaves the person's tree.
    if (hold && held === undefined) held = hold.finishHold(e.run_dir!);
    proxy.close();
    fs.rmSync(tmpDir, { recursive: true, force: true });
    if (privateState) {
      // A change that is no token refresh (another account, a removed token, garbage) is refused, named on the record.
      const back = writeBack(privateState);
      for (const f of back.failed) process.stderr.write(`li: a refreshed credential was not written back: ${f}\n`);
      back.refused.forEach((r) => denials.credential(r));
      fs.rmSync(privateState.root, { recursive: true, force: true });
    }
  };

  let failure: ((detail: { error: string }) => void) | null = null;
  return {
    result: () => ({ mode: "workspace", denials: denials.result(), ...(held ? { held } : {}) }),
    close: cleanup,
    onFailure: (fn) => void (failure = fn),
    spawn(argv, opts) {
      const url = `http://127.0.0.1:${PROXY_PORT}`;
      const inner: NodeJS.ProcessEnv = { ...opts.env, ...(opts.env[APPROVAL_SOCKET_ENV] ? { [APPROVAL_SOCKET_ENV]: INNER_APPROVALS } : {}), TMPDIR: tmpDir, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ALL_PROXY: url, all_proxy: url };
      // Everything goes through the proxy, loopback included: the sandbox's loopback is its own.
      delete inner.NO_PROXY;
      delete inner.no_proxy;
      // No variable names a socket of the host (SSH_AUTH_SOCK, TMUX, DBUS_…): li's own approval socket stays.
      for (const k of hostSocketVars(inner, [APPROVAL_SOCKET_ENV])) delete inner[k];
      // Nor another provider's model API key: this run's own is a placeholder the gateway fills in.
      const own = ownKeyVars(provider, inner);
      if (own) for (const k of modelKeyVars(inner, endpointKeyVars(e.spec.settings_dir ?? cwd))) if (!own.includes(k)) delete inner[k];
      const stdio = opts.stdio as unknown[];
      // A program the provider's command adds (rarely: it is li's node or the provider's own binary).
      let guard = execOnly;
      try {
        const more = programsOf(argv[0], inner.PATH).filter((p) => !guardedPrograms.includes(p));
        if (more.length) guard = [...execOnly, ...execOnlyBinds(more)];
      } catch (err) {
        return failedChild(err as Error);
      }
      mark("bwrap-spawn");
      // --as-pid-1: no bubblewrap init inside, which would hold the provider's streams and the
      // channel that reports its exit code, dumpable; strace is the sandbox's pid 1.
      const bwrapArgs = [...layout.args, ...guard, "--json-status-fd", "4", "--unshare-all", "--as-pid-1", "--die-with-parent", "--cap-drop", "ALL", ...TRACER_CAPS, "--chdir", cwd, "--", "/bin/sh", "-c", limitedLauncher(limits), "li-sandbox", String(PROXY_PORT), gateway ? String(GATEWAY_PORT) : "-", ...argv];
      const start = inCgroup(limits?.cgroup ?? null, ["bwrap", ...bwrapArgs], inner);
      const bwrap: ChildProcess = spawn(start.file, start.args, { stdio: [stdio[0], stdio[1], stdio[2], "pipe", "pipe"], env: start.env } as any);
      // bubblewrap's own report, which nothing inside can write: the sandbox's first pid (so its
      // pid namespace) and, when it ends by itself, its child's exit code.
      const status: { ns: string | null; code: number | null } = { ns: null, code: null };
      const say = (l: string) => typeof stdio[2] === "number" && fs.writeSync(stdio[2], `${l}\n`);
      // Fail closed (bridges.ts): said, told to the worker (which records sandbox_failed first), the sandbox ended.
      const broke = failClosed(say, () => failure, () => bwrap.exitCode === null && bwrap.signalCode === null && bwrap.kill("SIGKILL"));
      readline.createInterface({ input: bwrap.stdio[4] as Readable }).on("line", (l) => {
        try {
          const j = JSON.parse(l);
          if (typeof j["child-pid"] === "number") {
            status.ns = fs.readlinkSync(`/proc/${j["child-pid"]}/ns/pid`);
            bridges = startBridges(j["child-pid"], [[PROXY_PORT, sock], ...(gateway ? [[GATEWAY_PORT, gateway] as [number, string]] : [])], say, broke);
          }
          if (typeof j["exit-code"] === "number") status.code = j["exit-code"];
        } catch {}
      });
      // The provider's host pid, looked up once it starts (off the exit's path: a /proc scan); at
      // its exit line that one entry is read, the scan only when it was never found.
      let host: number | null = null;
      gone = (pid) => status.ns === null || hostPidOf(status.ns, pid, host) === null;
      const child = new EventEmitter() as EventEmitter & ProviderChild;
      child.stdout = bwrap.stdout;
      bwrap.on("error", (err) => child.emit("error", err));
      const trace = readline.createInterface({ input: bwrap.stdio[3] as Readable });
      trace.on("line", (l) => {
        // strace's own complaints share its log: they belong in the run's console.
        if (l.startsWith("strace: ")) {
          if (typeof stdio[2] === "number") fs.writeSync(stdio[2], `${l}\n`);
          return;
        }
        const [started, ended] = [reader.rootPid, reader.rootExit];
        reader.line(l);
        if (started === null && reader.rootPid !== null) {
          mark("provider-exec");
          setImmediate(() => status.ns !== null && reader.rootPid !== null && (host = hostPidOf(status.ns, reader.rootPid)));
        }
        if (ended === null && reader.rootExit !== null) mark("provider-exit");
        // The provider is done: whatever it left behind goes with the sandbox.
        if (reader.rootExit && bwrap.exitCode === null && bwrap.signalCode === null) bwrap.kill("SIGKILL");
      });
      const traced = new Promise<void>((r) => trace.on("close", () => r()));
      bwrap.on("exit", (code, signal) => {
        mark("bwrap-exit");
        bridges?.stop();
        // The log's last lines may still be in the pipe; a second at most, so an end is never held.
        let wait: NodeJS.Timeout | undefined;
        void Promise.race([traced, new Promise((r) => (wait = setTimeout(r, 1000)))]).then(() => {
          clearTimeout(wait);
          const end = reader.rootExit ?? (status.code !== null ? { code: status.code, signal: null } : { code, signal });
          // bubblewrap could not start the provider: a remembered yes (support.ts) is not trusted again,
          // and the run failed for its sandbox (the launcher's exit 125: a bridge never listened, or the cgroup refused it).
          if (reader.rootPid === null) {
            forgetSupport();
            broke(`the sandbox ended before its provider started (${end.signal ?? `exit ${end.code}`}${end.code === 125 ? ": its bridges to li's proxy or gateway, or its cgroup, did not come up" : ""})`);
          }
          mark("exit-emitted");
          child.emit("exit", end.code, end.signal);
        });
      });
      return child;
    },
  };
}
