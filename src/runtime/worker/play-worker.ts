/**
 * The play worker: a play owns exactly one session and ends mirroring it.
 *
 * The session runs in this same process (session-worker's run, in-process), so the play
 * and its session both carry this process's pid, pgid and start time: each record with a
 * process names it, and the session's queued steps have a live, started ancestor. Killing
 * the play cancels play → session → steps top-down (lifecycle/kill.ts); the supervisor sees
 * its session terminal at its next poll and stops.
 *
 * Reason codes: play.running.spawned; play.<status>.session_<status> when the session ends
 * (e.g. play.completed.session_completed, play.failed.session_failed);
 * play.failed.session_create_failed when the session record could not be made.
 */
import fs from "node:fs";
import path from "node:path";
import { readEnd } from "../../lifecycle/end-evidence.js";
import type { Store } from "../../lifecycle/store.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import { RunEnd } from "./run-end.js";
import { run as runSession } from "./session-worker.js";
import { createRecord, publishRunning } from "../submit/spawn.js";

/** How much of the session's console the play keeps in its own (so `li job output <play>` shows the run). */
const TRANSCRIPT_CAP = 4 * 1024 * 1024;

export async function run(store: Store, id: string): Promise<void> {
  const play = await publishRunning(store, id, "play");
  if (!play) return;
  const end = new RunEnd(store, play);
  const out = fs.openSync(path.join(play.run_dir!, "console.log"), "a", 0o600);
  const log = (line: string) => {
    try {
      fs.writeSync(out, `[play ${play.id}] ${line}\n`);
    } catch {}
  };
  try {
    let sessionId: string;
    try {
      const session = await createRecord(store, {
        kind: "session",
        parent_id: play.id,
        label: play.label,
        spec: play.spec.session,
        prompt: fs.readFileSync(path.join(play.run_dir!, "prompt.txt"), "utf8"),
      });
      sessionId = session.id;
    } catch (err: any) {
      // Killed before the session existed: the store refused a child under a terminal play.
      if (isTerminal((await store.get(play.id))?.status ?? "cancelled")) return;
      log(`could not create the session: ${err?.message ?? err}`);
      await end.finish("failed", "session_create_failed", { detail: { error: String(err?.message ?? err) } });
      return;
    }
    await store.annotate(play.id, { spec: { session_id: sessionId } });
    log(`playbook ${play.spec.playbook} (${play.spec.playbook_fingerprint}): session ${sessionId}`);

    await runSession(store, sessionId);

    const session = (await store.get(sessionId))!;
    transcript(out, session.run_dir!);
    // A session whose end could not be written yet (a full disk) left it as evidence: mirror that.
    const evidence = isTerminal(session.status) ? null : readEnd(session);
    const status = evidence?.to ?? session.status;
    if (isTerminal(status)) {
      // The play answers and costs what its session did.
      const mirrored = { ...(session.usage ? { usage: session.usage } : {}), ...(session.result_text !== null ? { result_text: session.result_text } : {}) };
      await end.finish(status, `session_${status}`, { patch: { current_phase: "done", ...mirrored }, detail: { session: sessionId, session_reason: evidence?.reason ?? session.reason_code } });
    } else {
      // The session's supervisor returned without ending it (its start was refused yet it is
      // not terminal): not expected, but the play must still end.
      await end.finish("failed", "session_unfinished", { detail: { session: sessionId, session_status: session.status } });
    }
  } finally {
    fs.closeSync(out);
  }
}

function transcript(out: number, sessionDir: string): void {
  try {
    const fd = fs.openSync(path.join(sessionDir, "console.log"), "r");
    try {
      const buf = Buffer.alloc(Math.min(fs.fstatSync(fd).size, TRANSCRIPT_CAP));
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      fs.writeSync(out, buf, 0, n);
    } finally {
      fs.closeSync(fd);
    }
  } catch {}
}
