import type { RunLimits } from "./limits-run.js";
import { DATA_CALLS } from "./trace.js";

/*
 * The shell scripts a sandboxed run starts with (run.ts): the one that enters the run's cgroup and
 * becomes bubblewrap, and the launcher inside that starts strace and, once li's bridges hold their
 * ports, the provider.
 */

// The launcher is POSIX sh (dash starts in less time than bash); the shell that waits for the
// bridges needs bash's /dev/tcp.
// Every process but the tracer starts with no capability (setpriv): strace alone keeps
// CAP_SYS_PTRACE in the sandbox's user namespace, to read the arguments of the processes made
// non-dumpable (exec-only.ts); the agent's processes never hold it.
const DROP = "setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all --";
const launcher = (calls: string) => [
  // The bridges to the proxy's and the gateway's ports are started from outside, in the sandbox's
  // network namespace only (bridges.ts): nothing inside can see or signal them.
  'port=$1; gw=$2; shift 2',
  // strace writes its log to its stderr, the worker's fd 3, with no `-o |cat` (two processes
  // fewer); the provider gets its own stderr back (fd 4) before it starts.
  'exec 4>&2 2>&3',
  // The provider (the first of the agent's code) starts only once each bridge holds its port, so
  // nothing of the agent's can bind it first; a bridge that never comes stops the run (exit 125).
  // The wait is inside the traced shell, so strace's start and the bridges' overlap (its failed
  // connects are to li's own ports, which the trace reader ignores). No process per try: the probe
  // is bash's own /dev/tcp, and the pause a read on fd 3, where the worker never writes (1 ms, then 9; 30 s in all).
  `exec strace -f -q -Z -y --seccomp-bpf -e trace=%file,connect${calls} -e signal=none -- ${DROP} /bin/bash -c 'for p in $0 $1; do [ "$p" = - ] && continue; for ((i = 0; i < 3400; i++)); do { exec 9<>/dev/tcp/127.0.0.1/$p; } 2>/dev/null && break; read -t 0.00$((i < 100 ? 1 : 9)) -u 3; done; ((i < 3400)) || { echo "li: the bridge to port $p of the sandbox did not start" >&4; exit 125; }; exec 9>&-; done; echo "li-root $$" >&3; exec 2>&4 3>&- 4>&-; shift; exec "$@"' "$port" "$gw" "$@"`,
].join("\n");
const LAUNCHER = launcher("");
/** Under a tmp limit the writes that may find a sized tmpfs full are traced too (a fork past pids is the cgroup's count). */
export const limitedLauncher = (l: RunLimits | null) => (l?.tmpSize ? launcher(`,${DATA_CALLS.join(",")}`) : LAUNCHER);
/** Puts its own pid in the run's cgroup (each cgroup.procs before `--`), then becomes bubblewrap: nothing runs outside it. */
export const ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "li: could not enter the run\'s cgroup ($1)" >&2; exit 125; }; shift; done; shift; exec "$@"';
