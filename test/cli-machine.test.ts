/**
 * Foundation (issue 2): the --machine envelope for success and every error kind, refusals that
 * happen before any record or run directory exists, owner-only files, id-prefix resolution and
 * the schema-version gate with `li state migrate`.
 */
import { dbOf } from "../src/lifecycle/db/handle.js";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS, SCHEMA_VERSION } from "../src/lifecycle/schema.js";
import { jobStatus, openStore, terminal, useHomes } from "./helpers/fixtures.js";
import { type Home, li, liData, type LiRun } from "./helpers/li.js";

const home = useHomes();

/** stdout is exactly one li.result JSON object and nothing else; exit status agrees with ok. */
function envelope(r: LiRun): any {
  let parsed: any;
  expect(() => (parsed = JSON.parse(r.stdout))).not.toThrow();
  expect(r.stdout.endsWith("\n")).toBe(true);
  expect(r.stdout.trimEnd().includes("\n")).toBe(false);
  expect(typeof parsed).toBe("object");
  expect(Array.isArray(parsed)).toBe(false);
  expect(parsed.contract).toBe("li.result");
  expect(parsed.version).toBe(1);
  if (parsed.ok === true) {
    expect(Object.keys(parsed).sort()).toEqual(["contract", "data", "ok", "version"]);
    expect(r.code).toBe(0);
  } else {
    expect(parsed.ok).toBe(false);
    expect(Object.keys(parsed).sort()).toEqual(["contract", "error", "ok", "version"]);
    expect(Object.keys(parsed.error).sort()).toEqual(["detail", "kind", "message"]);
    expect(typeof parsed.error.message).toBe("string");
    expect(typeof parsed.error.detail).toBe("object");
    expect(r.code).not.toBe(0);
  }
  return parsed;
}

function expectError(r: LiRun, kind: string, code?: number): any {
  const env = envelope(r);
  expect(env.ok).toBe(false);
  expect(env.error.kind).toBe(kind);
  if (code !== undefined) expect(r.code).toBe(code);
  return env.error;
}

/** No entity row and no run directory: the refusal happened before anything was written. */
function expectNothingRecorded(liHome: string) {
  expect(fs.existsSync(path.join(liHome, "runs"))).toBe(false);
  const db = path.join(liHome, "state.db");
  if (fs.existsSync(db)) {
    const d = new Database(db, { readonly: true });
    try {
      expect((d.prepare("SELECT count(*) AS n FROM entities").get() as any).n).toBe(0);
      expect((d.prepare("SELECT count(*) AS n FROM events").get() as any).n).toBe(0);
    } finally {
      d.close();
    }
  }
}

describe("--machine prints exactly one JSON object", () => {
  test("success: ok true with data, exit 0", async () => {
    const { env } = home();
    const r = await li(["--machine", "job", "list"], { env });
    const e = envelope(r);
    expect(e.ok).toBe(true);
    expect(e.data).toEqual({ jobs: [], count: 0, total: 0, next_cursor: null });
    // --machine is global: it may also follow the command.
    const r2 = await li(["agent", "--machine", "mock/echo", "placed", "late"], { env });
    expect(envelope(r2).data.status).toBe("completed");
    expect(r2.stderr).toContain("placed late");
  });

  test("invalid_input: exit 2, for handler refusals and for parse errors alike", async () => {
    const { env } = home();
    expectError(await li(["--machine", "agent", "mock/echo"], { env }), "invalid_input", 2);
    const parse = expectError(await li(["--machine", "agent", "--timeout", "soon", "mock/echo", "x"], { env }), "invalid_input", 2);
    expect(parse.message).toMatch(/soon/);
    expectError(await li(["--machine", "agent", "--no-such-flag", "mock/echo", "x"], { env }), "invalid_input", 2);
    expectError(await li(["--machine", "job", "status", "NOT AN ID!"], { env }), "invalid_input", 2);
    expectError(await li(["--machine", "nosuchcommand"], { env }), "invalid_input", 2);
    // A command group without its subcommand, and no command at all: usage goes to stderr,
    // and stdout still carries the one error object.
    expectError(await li(["--machine", "job"], { env }), "invalid_input", 2);
    expectError(await li(["--machine"], { env }), "invalid_input", 2);
  });

  test("not_found: an unknown id", async () => {
    const { env } = home();
    const err = expectError(await li(["--machine", "job", "status", "inv_0000000000zz"], { env }), "not_found", 1);
    expect(err.detail).toMatchObject({ id: "inv_0000000000zz", code: "unknown" });
    expectError(await li(["--machine", "kill", "ply_0000"], { env }), "not_found", 1);
  });

  test("conflict: a kill whose cancel the fence keeps refusing is a partial reap, and the record is left as it was", async () => {
    const h = home();
    const store = await openStore(h);
    const e = await store.insert({ kind: "invocation", label: "frozen" });
    // Every UPDATE of this row is silently dropped, so each compare-and-set write is refused.
    await dbOf(store).exec(`CREATE TRIGGER freeze BEFORE UPDATE ON entities WHEN OLD.id = '${e.id}' BEGIN SELECT RAISE(IGNORE); END;`);
    const before = JSON.stringify(await store.get(e.id));
    await store.close();
    const err = expectError(await li(["--machine", "kill", "--grace", "0", e.id], { env: h.env }), "conflict", 1);
    expect(err.detail.partial).toBe(true);
    expect(err.detail.entities).toEqual([expect.objectContaining({ id: e.id, action: "refused", status: "preparing" })]);
    const again = await openStore(h);
    expect(JSON.stringify(await again.get(e.id))).toBe(before);
    expect(await again.events(e.id)).toEqual([]);
    await again.close();
  });

  test("unavailable: a provider whose CLI is not on PATH, refused before any record exists", async () => {
    const h = home();
    const env = { ...h.env, PATH: path.dirname(process.execPath) };
    const err = expectError(await li(["--machine", "agent", "--detach", "claude/sonnet", "hello"], { env }), "unavailable", 1);
    expect(err.detail.provider).toBe("claude");
    expect(err.message).toMatch(/claude not found on PATH/);
    expectNothingRecorded(h.home);
  });

  test("internal: the run directory cannot be made (runs/ is a file); the record is failed, not left preparing", async () => {
    const h = home();
    fs.writeFileSync(path.join(h.home, "runs"), "not a directory");
    const err = expectError(await li(["--machine", "agent", "--detach", "mock/echo", "hi"], { env: h.env }), "internal", 1);
    expect(err.message).toMatch(/cannot create the run directory/);
    const id = err.detail.id;
    const j = await jobStatus(h.env, id);
    expect(j).toMatchObject({ status: "failed", reason_code: "invocation.failed.spawn_error" });
  });

  test("unavailable: an older schema, for every command but li state migrate (see the schema suite)", async () => {
    const h = home();
    const d = new Database(path.join(h.home, "state.db"));
    d.exec(MIGRATIONS[0]);
    d.pragma("user_version = 1");
    d.close();
    const err = expectError(await li(["--machine", "job", "list"], { env: h.env }), "unavailable", 1);
    expect(err.detail).toMatchObject({ schema_version: 1, required: SCHEMA_VERSION, remedy: "li state migrate" });
  });
});

describe("bad input is refused before any record or run directory exists", () => {
  const cases: [string, (h: Home) => string[]][] = [
    ["an unknown provider", () => ["agent", "nosuch/model", "hi"]],
    ["an unknown mock model", () => ["agent", "mock/whisper", "hi"]],
    ["an empty prompt", () => ["agent", "mock/echo", "   "]],
    ["an empty prompt file", (h) => ["agent", "mock/echo", "--prompt-file", write(h, "empty.txt", "")]],
    ["a prompt over the 4 MiB cap", (h) => ["agent", "mock/echo", "--prompt-file", write(h, "big.txt", Buffer.alloc(4 * 1024 * 1024 + 1, "a"))]],
    ["a NUL byte in the prompt file", (h) => ["agent", "mock/echo", "--prompt-file", write(h, "nul.txt", Buffer.from("before\0after"))]],
    ["a prompt file that is not UTF-8", (h) => ["agent", "mock/echo", "--prompt-file", write(h, "latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9]))]],
    ["a missing prompt file", (h) => ["agent", "mock/echo", "--prompt-file", path.join(h.home, "absent.txt")]],
    ["a missing cwd", (h) => ["agent", "--cwd", path.join(h.home, "no", "such", "dir"), "mock/echo", "hi"]],
    ["a cwd that is a file", (h) => ["agent", "--cwd", write(h, "file.txt", "x"), "mock/echo", "hi"]],
    ["a non-numeric timeout", () => ["agent", "--timeout", "ten", "mock/echo", "hi"]],
    ["a zero timeout", () => ["agent", "--timeout", "0", "mock/echo", "hi"]],
  ];
  function write(h: Home, name: string, data: string | Buffer): string {
    const file = path.join(h.home, name);
    fs.writeFileSync(file, data);
    return file;
  }

  test.each(cases)("%s", async (_name, args) => {
    const h = home();
    for (const detach of [[], ["--detach"]]) {
      const argv = args(h);
      const r = await li(["--machine", argv[0], ...detach, ...argv.slice(1)], { env: h.env });
      expectError(r, "invalid_input", 2);
      expectNothingRecorded(h.home);
    }
  });

  test("the 4 MiB cap itself is accepted (the refusal is only above it)", async () => {
    const h = home();
    const file = path.join(h.home, "cap.txt");
    fs.writeFileSync(file, Buffer.alloc(4 * 1024 * 1024, "b"));
    const sub = await liData(["agent", "--detach", "mock/flood:1", "--prompt-file", file], { env: h.env });
    expect(fs.statSync(path.join(path.dirname(sub.console_log), "prompt.txt")).size).toBe(4 * 1024 * 1024);
    expect((await terminal(h.env, sub.id)).status).toBe("completed");
  });

  test("a prompt beginning with - is ordinary data after --", async () => {
    const { env } = home();
    const sub = await liData(["agent", "--detach", "mock/echo", "--", "--version", "-x", "--machine"], { env });
    await terminal(env, sub.id);
    expect((await liData(["job", "output", sub.id], { env })).output).toBe("--version -x --machine");
    // Without --, a leading dash is an option, refused as invalid input.
    expectError(await li(["--machine", "agent", "mock/echo", "--bogus"], { env }), "invalid_input", 2);
  });
});

describe("files are owner-only", () => {
  test("state.db and runs/<id>/* are 0600; LI_HOME, runs/ and runs/<id>/ are 0700 — even under umask 000", async () => {
    const h = home();
    const liHome = path.join(h.home, "nested", "li");
    const env = { ...h.env, LI_HOME: liHome };
    const old = process.umask(0);
    let ids: string[];
    try {
      const a = await liData(["agent", "--detach", "mock/sleep:0.3", "one"], { env });
      const b = await liData(["agent", "--detach", "mock/fail:3", "two"], { env });
      ids = [a.id, b.id];
      for (const id of ids) await terminal(env, id);
    } finally {
      process.umask(old);
    }
    const mode = (p: string) => fs.statSync(p).mode & 0o777;
    expect(mode(path.join(h.home, "nested"))).toBe(0o700);
    expect(mode(liHome)).toBe(0o700);
    expect(mode(path.join(liHome, "runs"))).toBe(0o700);
    for (const f of fs.readdirSync(liHome).filter((f) => f.startsWith("state.db"))) expect([f, mode(path.join(liHome, f))]).toEqual([f, 0o600]);
    expect(fs.existsSync(path.join(liHome, "state.db"))).toBe(true);
    for (const id of ids!) {
      const dir = path.join(liHome, "runs", id);
      expect(mode(dir)).toBe(0o700);
      const files = fs.readdirSync(dir);
      expect(files).toEqual(expect.arrayContaining(["console.log", "prompt.txt"]));
      for (const f of files) expect([f, mode(path.join(dir, f))]).toEqual([f, 0o600]);
    }
  });
});

describe("prefix resolution", () => {
  test("an unambiguous prefix resolves; an ambiguous one is an error listing its matches", async () => {
    const h = home();
    const store = await openStore(h);
    const a = await store.insert({ kind: "invocation", label: "a" });
    const b = await store.insert({ kind: "invocation", label: "b" });
    await store.close();
    let lcp = 0;
    while (a.id[lcp] === b.id[lcp]) lcp++;
    const shared = a.id.slice(0, lcp);
    expect(shared.length).toBeGreaterThan(4);

    const one = await liData(["job", "status", a.id.slice(0, lcp + 1)], { env: h.env });
    expect(one.jobs.map((j: any) => j.id)).toEqual([a.id]);
    expect((await liData(["state", "events", b.id.slice(0, lcp + 1).toUpperCase()], { env: h.env })).id).toBe(b.id);

    const err = expectError(await li(["--machine", "job", "status", shared], { env: h.env }), "invalid_input", 2);
    expect(err.detail.code).toBe("ambiguous");
    expect(err.detail.matches).toEqual([a.id, b.id].sort());
    const human = await li(["job", "status", shared], { env: h.env });
    expect(human.code).toBe(2);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain(a.id);
    expect(human.stderr).toContain(b.id);
  });
});

describe("schema versions", () => {
  test("a state.db at user_version 2 makes commands refuse, naming li state migrate; li state migrate fixes it", async () => {
    const h = home();
    const file = path.join(h.home, "state.db");
    const d = new Database(file);
    d.exec(MIGRATIONS[0]);
    d.exec(MIGRATIONS[1]);
    d.pragma("user_version = 2");
    d.prepare(
      "INSERT INTO entities (id, kind, status, outcome, reason_code, created_at, updated_at, ended_at) VALUES (?, 'invocation', 'completed', 'succeeded', 'invocation.completed.exit_zero', ?, ?, ?)",
    ).run("inv_01old0000000000000000000", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z");
    d.close();
    expect(SCHEMA_VERSION).toBeGreaterThan(2);

    for (const args of [["job", "list"], ["job", "status", "inv_01old"], ["agent", "--detach", "mock/echo", "hi"], ["wait", "inv_01old"]]) {
      const err = expectError(await li(["--machine", ...args], { env: h.env }), "unavailable", 1);
      expect(err.message).toContain("li state migrate");
      expect(err.detail).toMatchObject({ schema_version: 2, required: SCHEMA_VERSION, remedy: "li state migrate" });
      const human = await li(args, { env: h.env });
      expect(human.code).toBe(1);
      expect(human.stderr).toContain("li state migrate");
    }
    // Refusing wrote nothing: the file is still at version 2 and no run was started.
    const check = new Database(file, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(2);
    check.close();
    expect(fs.existsSync(path.join(h.home, "runs"))).toBe(false);

    const m = await liData(["state", "migrate"], { env: h.env });
    expect(m).toEqual({ from_version: 2, to_version: SCHEMA_VERSION, applied: Array.from({ length: SCHEMA_VERSION - 2 }, (_, i) => i + 3) });
    const again = await liData(["state", "migrate"], { env: h.env });
    expect(again).toEqual({ from_version: SCHEMA_VERSION, to_version: SCHEMA_VERSION, applied: [] });

    const list = await liData(["job", "list"], { env: h.env });
    expect(list.jobs.map((j: any) => [j.id, j.status])).toEqual([["inv_01old0000000000000000000", "completed"]]);
    const sub = await liData(["agent", "--detach", "mock/echo", "after migrate"], { env: h.env });
    expect((await terminal(h.env, sub.id)).status).toBe("completed");
  });

  test("li state migrate in a home with no state.db yet creates nothing and says the first run will", async () => {
    const h = home();
    expect(await liData(["state", "migrate"], { env: h.env })).toEqual({ from_version: 0, to_version: 0, applied: [] });
    const human = await li(["state", "migrate"], { env: h.env });
    expect([human.code, human.stdout.trim()]).toEqual([0, `no state.db yet in ${h.home}: the first run creates it at v${SCHEMA_VERSION}, so there is nothing to migrate`]);
    expect(fs.existsSync(path.join(h.home, "state.db"))).toBe(false);
  });

  test("a newer schema than this li understands is unavailable too, and migrate does not touch it", async () => {
    const h = home();
    const d = new Database(path.join(h.home, "state.db"));
    for (const m of MIGRATIONS) d.exec(m);
    d.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    d.close();
    const err = expectError(await li(["--machine", "job", "list"], { env: h.env }), "unavailable", 1);
    expect(err.detail).toMatchObject({ schema_version: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION });
    expectError(await li(["--machine", "state", "migrate"], { env: h.env }), "unavailable", 1);
  });
});
