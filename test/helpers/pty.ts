import { spawn } from "node:child_process";
import { ignoreEpipe, LI_BIN, ROOT } from "./li.js";

/*
 * Runs the built CLI on a pseudo-terminal (python3's pty module), so it sees a TTY as a person's
 * shell gives it. Bytes written with `send` arrive as typed: "\x03" is Ctrl-C, which the
 * terminal turns into SIGINT for li's process group.
 */
const DRIVER = String.raw`
import os, pty, select, signal, struct, sys, fcntl, termios
rows, cols = int(os.environ.get("PTY_ROWS", "30")), int(os.environ.get("PTY_COLS", "100"))
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
os.kill(pid, signal.SIGWINCH)
inputs = [fd, 0]
while True:
    r, _, _ = select.select(inputs, [], [], 0.05)
    if fd in r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            break
        os.write(1, data)
    if 0 in r:
        data = os.read(0, 1024)
        if data:
            os.write(fd, data)
        else:
            inputs.remove(0)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 255)
`;

export interface PtyRun {
  /** Everything li wrote to its terminal (stdout and stderr are the same device). */
  output: () => string;
  send: (text: string) => void;
  /** Resolves once `pattern` has appeared in the output. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  exit: Promise<number | null>;
}

export function liInPty(args: string[], opts: { env: NodeJS.ProcessEnv; rows?: number; cols?: number }): PtyRun {
  const env = { ...opts.env, PTY_ROWS: String(opts.rows ?? 30), PTY_COLS: String(opts.cols ?? 100), TERM: "xterm" };
  const child = spawn("python3", ["-c", DRIVER, process.execPath, LI_BIN, ...args], { env, cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  let text = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.on("data", (d: Buffer) => {
    text += d.toString("utf8");
    for (const w of [...waiters]) if (w.pattern.test(text)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  // A driver that has exited shows in `exit` and the output, not in a write's EPIPE.
  ignoreEpipe(child.stdin);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60000);
  void exit.then(() => clearTimeout(timer));
  return {
    output: () => text,
    send: (s) => child.stdin.write(s),
    waitFor: (pattern, timeoutMs = 20000) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(text)) return resolve();
        const t = setTimeout(() => reject(new Error(`${pattern} did not appear; the terminal shows:\n${text}`)), timeoutMs);
        waiters.push({ pattern, resolve: () => (clearTimeout(t), resolve()) });
      }),
    exit,
  };
}
