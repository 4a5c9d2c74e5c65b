/**
 * mock/edit: the prompt is a list of file edits the mock agent makes in its working directory, so
 * isolated runs have a change to capture without a real agent. Dependency-free (mock-agent.ts).
 *
 *   write PATH TEXT    replace the file with TEXT
 *   append PATH TEXT   add TEXT to its end
 *   delete PATH        remove it
 *   link PATH TARGET   make PATH a symbolic link to TARGET (anywhere: what a hostile agent leaves)
 *   sleep SECONDS      wait before the next edit (a worker that ends later than the others)
 *   waitfor PATH       wait until PATH exists (absolute, or from the working directory): a test
 *                      holds the agent until it has seen what it needs to, with no fixed sleep
 *
 * In TEXT, \n is a newline and \\ a backslash. A line prefixed `worker K: ` is made only by the
 * K-th worker of a fan-out (LI_FANOUT_WORKER, 1-based), so one prompt can give each worker its part.
 * A line `end` ends the edits: nothing after it is read (a flow step's task ends so, since li
 * follows it with the flow's goal).
 */
import fs from "node:fs";
import path from "node:path";

interface Edit {
  op: "write" | "append" | "delete" | "link" | "sleep" | "waitfor";
  file: string;
  text: string;
}

const decode = (text: string) => text.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));

/** The edits of a prompt meant for this worker, or the first line that is not one. */
export function parseEdits(prompt: string, worker: string | undefined): { edits: Edit[] } | { error: string } {
  const edits: Edit[] = [];
  for (const raw of prompt.split("\n")) {
    let line = raw.replace(/\r$/, "");
    if (!line.trim()) continue;
    // What follows `end` is not read: a flow step's prompt is its task followed by the goal.
    if (line.trim() === "end") break;
    const only = /^worker (\d+): (.*)$/s.exec(line);
    if (only) {
      if (worker === undefined || Number(only[1]) !== Number(worker)) continue;
      line = only[2];
    }
    const nap = /^sleep (\d+(?:\.\d+)?)$/.exec(line);
    if (nap) {
      edits.push({ op: "sleep", file: "", text: nap[1] });
      continue;
    }
    const hold = /^waitfor (\S+)$/.exec(line);
    if (hold) {
      edits.push({ op: "waitfor", file: hold[1], text: "" });
      continue;
    }
    const m = /^(write|append|delete|link) (\S+)(?: (.*))?$/s.exec(line);
    if (!m || (m[1] === "delete" && m[3] !== undefined) || (m[1] === "link" && !m[3]))
      return { error: `not an edit: ${JSON.stringify(raw)} (write PATH TEXT, append PATH TEXT, delete PATH, link PATH TARGET, sleep SECONDS or waitfor PATH)` };
    const file = path.normalize(m[2]);
    if (path.isAbsolute(m[2]) || file === "." || file === ".." || file.startsWith("../")) return { error: `path outside the working directory: ${JSON.stringify(m[2])}` };
    edits.push({ op: m[1] as Edit["op"], file, text: decode(m[3] ?? "") });
  }
  return { edits };
}

/** Synchronous, as the edits are: this mock does nothing else meanwhile. */
const nap = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs mock/edit on a prompt; returns the exit code (2: a line that is not an edit, 1: an edit that failed). */
export function runEdits(prompt: string): number {
  const parsed = parseEdits(prompt, process.env.LI_FANOUT_WORKER || undefined);
  if ("error" in parsed) {
    fs.writeSync(2, `mock-agent: ${parsed.error}\n`);
    return 2;
  }
  for (const e of parsed.edits) {
    if (e.op === "sleep") {
      nap(Number(e.text) * 1000);
      continue;
    }
    if (e.op === "waitfor") {
      // Until it exists, however long: the run's own timeout, or a kill, ends the wait.
      while (!fs.existsSync(e.file)) nap(50);
      continue;
    }
    try {
      if (e.op === "delete") fs.rmSync(e.file);
      else if (e.op === "link") {
        fs.mkdirSync(path.dirname(e.file), { recursive: true });
        fs.symlinkSync(e.text, e.file);
      } else {
        fs.mkdirSync(path.dirname(e.file), { recursive: true });
        (e.op === "write" ? fs.writeFileSync : fs.appendFileSync)(e.file, e.text);
      }
    } catch (err) {
      fs.writeSync(2, `mock-agent: ${e.op} ${e.file}: ${(err as Error).message}\n`);
      return 1;
    }
    fs.writeSync(1, `edit: ${e.op} ${e.file}\n`);
  }
  return 0;
}
