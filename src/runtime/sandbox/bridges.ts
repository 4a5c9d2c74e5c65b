import { spawn, type ChildProcess } from "node:child_process";

/*
 * The bridges from a workspace sandbox's loopback ports to li's proxy and model gateway
 * (docs/sandbox.md#what-runs-where): socat, started from outside the sandbox, in its network
 * namespace only. It is in no pid namespace the agent sees, so nothing inside can signal, ptrace
 * or even name it; it holds 127.0.0.1:PORT before the launcher lets the provider start, and without
 * SO_REUSEPORT no second listener can share the port. It connects to the sockets by their host paths.
 *
 * Entering the network namespace needs CAP_SYS_ADMIN in the user namespace that owns it. bubblewrap
 * run by an unprivileged user nests the sandbox's processes in a second user namespace (for /dev's
 * devpts), so the owner is not any process's: perl (Debian's perl-base is essential) asks the
 * kernel for it (NS_GET_USERNS on the network namespace) and hands it to nsenter as an open fd.
 * As its owner's user in the parent namespace, li holds every capability there; setpriv drops them
 * all before socat runs. A kill -9 of the worker kills each bridge (parent-death signal, set before
 * perl runs and again after nsenter); the sandbox's end (run.ts) kills them too.
 */

/** Opens the owner of /proc/PID/ns/net, keeps it across exec, and becomes nsenter into it (into the network namespace alone when li already runs in that owner). */
const ENTER = [
  'my ($parent, $pid, @cmd) = @ARGV;',
  // The worker died before the parent-death signal was set: nothing to bridge for.
  'exit 1 if getppid() != $parent;',
  'open(my $net, "<", "/proc/$pid/ns/net") or die "li: the sandbox ($pid) is gone: $!\\n";',
  'my $u = ioctl($net, 0xb701, 0);',
  'defined $u or die "li: could not find the owner of the sandbox\'s network namespace: $!\\n";',
  'open(my $uf, "<&=", 0 + $u) or die "li: $!\\n";',
  'fcntl($uf, 2, 0) or die "li: $!\\n";',
  'my @own = stat("/proc/self/ns/user"); my @them = stat($uf);',
  'my @user = ($own[0] == $them[0] && $own[1] == $them[1]) ? () : ("--user=/proc/self/fd/" . fileno($uf), "--preserve-credentials");',
  'exec("nsenter", @user, "--net=/proc/$pid/ns/net", "--", @cmd) or die "li: nsenter: $!\\n";',
].join("\n");

/** Connections a bridge serves at once: each is a process outside the run's pid limit. */
export const BRIDGE_CHILDREN = 64;

export interface Bridges {
  /** Kills every bridge (their forked connections end with their peers). */
  stop(): void;
}

/**
 * One socat per [port, host socket], listening on 127.0.0.1:port inside the sandbox whose first
 * process is `hostPid`. A bridge that ends before `stop` (nsenter or perl missing or refused,
 * socat failing) calls `onFail` once, with why: the run then ends failed (sandbox_failed) rather
 * than wait for the launcher's 30 s, and never runs without its proxy or its gateway.
 */
export function startBridges(hostPid: number, pairs: [number, string][], onError: (line: string) => void, onFail: (why: string) => void = () => {}): Bridges {
  const procs: ChildProcess[] = [];
  let stopped = false;
  let failed = false;
  const fail = (why: string) => {
    if (stopped || failed) return;
    failed = true;
    onFail(why);
  };
  for (const [port, sock] of pairs) {
    // reuseaddr only: no reuseport, so no listener of the agent's can share the port.
    const socat = ["socat", `TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr,max-children=${BRIDGE_CHILDREN}`, `UNIX-CONNECT:${sock}`];
    const drop = ["setpriv", "--pdeathsig", "KILL", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--", ...socat];
    const p = spawn("setpriv", ["--pdeathsig", "KILL", "--", "perl", "-e", ENTER, String(process.pid), String(hostPid), ...drop], { stdio: ["ignore", "ignore", "pipe"] });
    // The last words of its programs (nsenter's, socat's), for the failure's detail: bounded.
    let last = "";
    p.on("error", (err) => {
      onError(`li: the sandbox's bridge to port ${port} did not start: ${err.message}`);
      fail(`the sandbox's bridge to port ${port} did not start: ${err.message}`);
    });
    // socat's complaints (a connection the proxy closed) are no one's business; li's own are the console's.
    p.stderr?.setEncoding("utf8").on("data", (d: string) => {
      const lines = d.split("\n").filter(Boolean);
      if (lines.length) last = lines[lines.length - 1].slice(0, 300);
      lines.filter((l) => l.startsWith("li: ")).forEach(onError);
    });
    p.on("close", (code, signal) => fail(`the sandbox's bridge to port ${port} ended before the sandbox did (${signal ?? `exit ${code}`})${last ? `: ${last.replace(/^li: /, "")}` : ""}`));
    procs.push(p);
  }
  return {
    stop() {
      stopped = true;
      for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    },
  };
}

/** Fails a sandbox closed, once: said on its console, told to the worker (which records sandbox_failed first), then ended by `kill`. */
export function failClosed(say: (line: string) => void, tell: () => ((d: { error: string }) => void) | null, kill: () => void): (error: string) => void {
  let done = false;
  return (error) => {
    if (done) return;
    done = true;
    say(`li: ${error}`);
    tell()?.({ error });
    kill();
  };
}
