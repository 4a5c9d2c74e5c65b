/*
 * What li's long-running commands (li schedule daemon, li host run) share: SIGTERM and SIGINT as
 * a request to stop after the work in hand, a sleep that request cuts short, and a log line
 * stamped with the time.
 */
export class StopSignals {
  /** The signal that asked to stop, once one has. */
  stoppedBy: NodeJS.Signals | null = null;
  /** Every sleep in progress: a daemon may have several loops asleep at once. */
  private readonly sleepers = new Set<() => void>();
  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.stoppedBy = sig;
    this.wakeAll();
  };

  constructor() {
    process.on("SIGTERM", this.onSignal);
    process.on("SIGINT", this.onSignal);
  }

  /** Sleeps `ms`, or until a stop is asked for. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(t);
        this.sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  /** Ends every sleep now (a loop that has another reason to stop than a signal). */
  wakeAll(): void {
    for (const wake of [...this.sleepers]) wake();
  }

  dispose(): void {
    process.off("SIGTERM", this.onSignal);
    process.off("SIGINT", this.onSignal);
  }
}

/** A daemon's log: one line per event, stamped with the time, on the live stream. */
export function timestampedLog(out: { write(s: string): unknown }): (line: string) => void {
  return (line) => void out.write(`${new Date().toISOString()} ${line}\n`);
}
