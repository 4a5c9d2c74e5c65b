/**
 * Played as a determined agent under --sandbox workspace: li reads files the agent can write after
 * and while it runs. codex's sessions folder is writable inside (its session state), and the
 * worker follows the thread's log there for live usage (codex-rollout.ts). A FIFO left in the
 * log's place must not freeze the worker: its deadline is what ends the run. Judged by the run's
 * record, with a hostile `codex` (test/helpers/hostile-cli.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { hostileWorld } from "./helpers/hostile-cli.js";

const describeSandbox = sandboxSuite("sandbox-attack-record.test.ts");

describeSandbox("files li reads that the agent can write", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-rec-");

  test("a FIFO in place of codex's thread log: the worker is not held by it, and the run's --timeout ends the run", async () => {
    const h = homes();
    const scratch = scratchDir();
    const { home, work, env } = hostileWorld(scratch, h.env);
    fs.mkdirSync(path.join(home, ".codex"), { recursive: true });
    // codex's own login, unmetered: the gateway plays no part.
    delete env.OPENAI_API_KEY;
    delete env.CODEX_API_KEY;
    // The thread's log as codex names it, made a FIFO nobody writes; then the agent works on past the deadline.
    const step = 'd="$HOME/.codex/sessions/2026/12/07"; mkdir -p "$d" && mkfifo "$d/rollout-2026-12-07T00-00-00-hostile-thread-1.jsonl" && echo fifo && sleep 600';
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--timeout", "5", "codex/gpt-5", step], { env, cwd: work });
    const done = await terminal(env, r.id, 90_000);
    expect(done).toMatchObject({ status: "timed_out", reason_code: "invocation.timed_out.deadline" });
    // The FIFO was there for the worker to trip on: the test can tell.
    expect(fs.statSync(path.join(home, ".codex", "sessions", "2026", "12", "07", "rollout-2026-12-07T00-00-00-hostile-thread-1.jsonl")).isFIFO()).toBe(true);
  }, 120_000);
});
