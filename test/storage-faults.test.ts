/**
 * Units under the storage-fault scenarios (store-faults.test.ts): which errors are a full disk
 * and how it is reported, which are storage-write failures the reaper tolerates, and how the
 * reaper uses (or refuses) a worker's end.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../src/errors.js";
import { END_FILE } from "../src/lifecycle/end-evidence.js";
import { observe } from "../src/lifecycle/observe.js";
import { runDir } from "../src/lifecycle/paths.js";
import { asStorageError, isDiskFull, isStorageWriteFailure } from "../src/lifecycle/storage-faults.js";
import type { Entity, Store } from "../src/lifecycle/store.js";
import { events, openStore, useHomes } from "./helpers/fixtures.js";
import { tinyFsTest, useTinyFs } from "./helpers/tinyfs.js";

const sqlite = (code: string, message = "x") => Object.assign(new Error(message), { code });
const home = useHomes();
const tiny = useTinyFs(1024 * 1024);
const onTinyFs = tinyFsTest(tiny);

describe("the full-disk mapping", () => {
  const roomy = os.tmpdir();

  test.each(["SQLITE_FULL", "ENOSPC", "EDQUOT"])("%s is a full disk wherever it happens", (code) => {
    expect(isDiskFull(sqlite(code), roomy)).toBe(true);
  });

  test("an ambiguous I/O error with room on the disk, and a programming error, stay as they are", () => {
    const io = sqlite("SQLITE_IOERR_SHMSIZE", "disk I/O error");
    expect(asStorageError(io, roomy)).toBe(io);
    const bug = new TypeError("x is not a function");
    expect(asStorageError(bug, roomy)).toBe(bug);
  });

  onTinyFs("an ambiguous I/O (or read-only) error on a full disk is a full disk", () => {
    tiny.fill();
    try {
      for (const code of ["SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_WRITE", "SQLITE_READONLY", "SQLITE_CANTOPEN"]) expect([code, isDiskFull(sqlite(code), tiny.dir)]).toEqual([code, true]);
      expect(isDiskFull(sqlite("SQLITE_CONSTRAINT"), tiny.dir)).toBe(false);
    } finally {
      tiny.free();
    }
  });

  test("the error says what is wrong and what to do, with a stable kind and reason", () => {
    const err = asStorageError(sqlite("SQLITE_FULL", "database or disk is full"), "/some/home") as LiError;
    expect(err).toBeInstanceOf(LiError);
    expect(err.kind).toBe("unavailable");
    expect(err.message).toBe("the disk holding LI_HOME (/some/home) is full; free space and retry");
    expect(err.detail).toMatchObject({ reason: "disk_full", path: "/some/home", cause: { code: "SQLITE_FULL", message: "database or disk is full" } });
    // Already mapped: passed through, not wrapped again.
    expect(asStorageError(err)).toBe(err);
  });

  test("storage-write failures are the storage's refusals, never li's bugs", () => {
    for (const code of ["SQLITE_FULL", "SQLITE_READONLY", "SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED", "SQLITE_IOERR_WRITE", "ENOSPC", "EROFS", "EIO"])
      expect([code, isStorageWriteFailure(sqlite(code))]).toEqual([code, true]);
    for (const err of [new TypeError("bug"), sqlite("SQLITE_CONSTRAINT_UNIQUE"), sqlite("SQLITE_ERROR"), new LiError("conflict", "x")])
      expect(isStorageWriteFailure(err)).toBe(false);
  });

  test("a PostgreSQL server gone or restarting is a storage failure; refused credentials, a missing database or a constraint are not", () => {
    const pg = (code: string | undefined, message = "x") => Object.assign(new Error(message), code ? { code } : {});
    for (const err of [pg("ECONNREFUSED"), pg("ECONNRESET"), pg("57P01"), pg("57P03"), pg("08006"), pg(undefined, "Connection terminated unexpectedly"), new LiError("unavailable", "x", { reason: "store_unreachable" })])
      expect([err.message, (err as any).code, isStorageWriteFailure(err)]).toEqual([err.message, (err as any).code, true]);
    for (const err of [pg("28P01"), pg("3D000"), pg("23505"), pg("42P01"), new LiError("unavailable", "x", { reason: "store_credentials" }), new LiError("unavailable", "x", { reason: "schema_unknown" })])
      expect([(err as any).code ?? (err as any).detail?.reason, isStorageWriteFailure(err)]).toEqual([(err as any).code ?? (err as any).detail?.reason, false]);
  });
});

describe("the reaper", () => {
  /** A pid above any pid_max: never a live process, so the run is conclusively gone. */
  const GONE_PID = 4194305;

  async function goneRun(s: Store): Promise<Entity> {
    const e = await s.insert({ kind: "invocation", run_dir: runDir });
    fs.mkdirSync(e.run_dir!, { recursive: true });
    const r = await s.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime", patch: { pid: GONE_PID, pgid: GONE_PID, proc_start: 12345, started_at: new Date().toISOString() } });
    if (!r.ok) throw new Error("setup");
    return r.entity;
  }

  /** `s` with a transition that always throws `err`. */
  const refusing = (s: Store, err: unknown): Store => Object.create(s, { transition: { value: () => { throw err; } } });

  test.each(["SQLITE_FULL", "SQLITE_READONLY", "SQLITE_BUSY", "SQLITE_IOERR_WRITE"])("a reap refused with %s: stopped_without_end, nothing changed", async (code) => {
    const h = home();
    const s = await openStore(h);
    try {
      const e = await goneRun(s);
      const o = await observe(refusing(s, sqlite(code)), e, { reap: true });
      expect(o.placement).toBe("stopped_without_end");
      expect(await s.get(e.id)).toEqual(e);
      expect((await events(h, e.id)).map((v) => v.to_status)).toEqual(["running"]);
    } finally {
      await s.close();
    }
  });

  test("a programming error in the reap is not swallowed", async () => {
    const h = home();
    const s = await openStore(h);
    try {
      const e = await goneRun(s);
      await expect(observe(refusing(s, new TypeError("bug")), e, { reap: true })).rejects.toThrow("bug");
    } finally {
      await s.close();
    }
  });

  const evidence = (e: Entity, over: Record<string, unknown> = {}) =>
    JSON.stringify({ to: "completed", reason: "invocation.completed.exit_zero", exit_code: 0, current_phase: null, at: "2026-01-01T00:00:00.000Z", detail: null, pid: e.pid, proc_start: e.proc_start, ...over });

  test("the worker's recorded end is published instead of lost, by the reaper, saying where it came from", async () => {
    const h = home();
    const s = await openStore(h);
    try {
      const e = await goneRun(s);
      fs.writeFileSync(path.join(e.run_dir!, END_FILE), evidence(e).padEnd(4095) + "\n");
      const o = await observe(s, e, { reap: true });
      expect(o.entity).toMatchObject({ status: "completed", reason_code: "invocation.completed.exit_zero", exit_code: 0 });
      const end = (await events(h, e.id)).at(-1)!;
      expect(end).toMatchObject({ to_status: "completed", source: "reaper" });
      expect(JSON.parse(end.detail!)).toMatchObject({ from: "worker_evidence", recorded_at: "2026-01-01T00:00:00.000Z", pid: GONE_PID });
    } finally {
      await s.close();
    }
  });

  test.each([
    ["the placeholder", () => JSON.stringify({ pending: true })],
    ["another process's end", (e: Entity) => evidence(e, { proc_start: 999 })],
    ["a reason of another kind", (e: Entity) => evidence(e, { reason: "session.completed.steps_completed" })],
    ["an end a worker cannot claim", (e: Entity) => evidence(e, { to: "cancelled", reason: "invocation.cancelled.killed" })],
    ["a torn write", (e: Entity) => evidence(e).slice(0, 40)],
  ])("%s in end.json is ignored: the run is lost", async (_what, content) => {
    const h = home();
    const s = await openStore(h);
    try {
      const e = await goneRun(s);
      fs.writeFileSync(path.join(e.run_dir!, END_FILE), content(e));
      expect((await observe(s, e, { reap: true })).entity).toMatchObject({ status: "lost", reason_code: "invocation.lost.process_gone" });
    } finally {
      await s.close();
    }
  });
});
