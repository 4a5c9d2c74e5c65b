/**
 * Human output (issue 13, item 2): relative ages and durations, local times with the zone said
 * once, tables fitted to the terminal, colour only for a terminal without NO_COLOR, the
 * shortest unambiguous id prefix (which resolves), @last, and the id shape in the hint.
 */
import { table } from "../src/cli/format.js";
import { ago, duration, localTime, zoneNote } from "../src/cli/human-time.js";
import { MIN_SHORT_ID, shortIds } from "../src/lifecycle/short-ids.js";
import { terminal, useHomes, withStore } from "./helpers/fixtures.js";
import { li, liData } from "./helpers/li.js";
import { liInPty } from "./helpers/pty.js";

const home = useHomes({ stopRuns: true });
const ESC = /\x1b\[/;

describe("times for people", () => {
  test("durations and ages are short; old times become dates; the zone is named with its offset", () => {
    expect([0.04, 3.27, 42, 184, 7500, 3 * 86400 + 4 * 3600].map(duration)).toEqual(["0.0s", "3.2s", "42s", "3m04s", "2h05m", "3d04h"]);
    const now = Date.parse("2026-08-01T12:00:00Z");
    const at = (s: number) => new Date(now - s * 1000).toISOString();
    expect([0, 42, 300, 3 * 3600, 2 * 86400, -90].map((s) => ago(at(s), now))).toEqual(["just now", "42s ago", "5m ago", "3h ago", "2d ago", "in 1m"]);
    expect(ago(at(40 * 86400), now)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // (Conversion to a named zone is checked end to end below, with TZ set for the CLI.)
    expect(localTime("2026-08-01T12:00:00.000Z")).toMatch(/^2026-0[78]-\d{2} \d{2}:\d{2}:00$/);
    expect(zoneNote()).toMatch(/UTC[+-]\d{2}:\d{2}\)?$/);
  });
});

describe("tables", () => {
  const rows = [
    { id: "inv_01k3aaaa", status: "running", model: "openai/some-very-long-model-name-indeed", label: "nightly-report-generation", reason: "x".repeat(30) },
    { id: "inv_01k3bbbb", status: "failed", model: "mock/echo", label: null, reason: "invocation.failed.exit_nonzero" },
  ];
  const cols = [{ key: "id", keep: true }, { key: "status", keep: true }, { key: "model" }, { key: "label", drop: 1 }, { key: "reason", drop: 2 }];

  test("fit the width: long cells are cut with an ellipsis, then low-value columns go; ids are never cut", () => {
    const wide = table(rows, cols, { width: 500, colour: false });
    expect(wide.split("\n")[1]).toContain("openai/some-very-long-model-name-indeed");
    for (const width of [100, 60, 40]) {
      const lines = table(rows, cols, { width, colour: false }).split("\n");
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
      expect(lines[1].startsWith("inv_01k3aaaa")).toBe(true);
    }
    expect(table(rows, cols, { width: 60, colour: false })).toMatch(/…/);
    expect(table(rows, cols, { width: 40, colour: false }).split("\n")[0]).toMatch(/^ID\s+STATUS\s+MODEL$/);
  });

  test("colour is added after fitting and only when asked", () => {
    const plain = table(rows, [...cols.slice(0, 2)], { width: 80, colour: false });
    const tinted = table(rows, [cols[0], { key: "status", tint: (v: unknown) => (v === "failed" ? "red" : undefined) }], { width: 80, colour: true });
    expect(plain).not.toMatch(ESC);
    expect(tinted).toContain("\x1b[31mfailed\x1b[0m");
    expect(tinted.replace(/\x1b\[[0-9;]*m/g, "")).toBe(plain);
  });
});

describe("ids a person types", () => {
  test("the shortest unambiguous prefix: never under the minimum, long enough to split near neighbours, and it resolves", async () => {
    const h = home();
    // Real-length ids: a and b share 19 characters, c shares only the kind and a few of time.
    const [a, b, c] = ["inv_01k3f0x9q8aaaaaaaaaaaaaaaa", "inv_01k3f0x9q8aaaaabcccccccccc", "inv_01k3zzzzzzzzzzzzzzzzzzzzzz"];
    await withStore(h, async (s) => {
      for (const id of [a, b, c]) await s.insert({ kind: "invocation", id });
    });
    const short = await withStore(h, (s) => shortIds(s, [a, b, c]));
    expect(short.get(a)).toBe(a.slice(0, 20));
    expect(short.get(b)).toBe(b.slice(0, 20));
    expect(short.get(c)).toBe(c.slice(0, MIN_SHORT_ID + 1));
    // The human list shows those prefixes, and each one works as an argument.
    const list = await li(["job", "list"], { env: h.env });
    const shown = list.stdout.split("\n").slice(1).map((l) => l.split(/\s+/)[0]).filter((w) => w.startsWith("inv_"));
    expect(shown.sort()).toEqual([...short.values()].sort());
    for (const [id, prefix] of short) expect((await liData(["job", "status", prefix], { env: h.env })).jobs[0].id).toBe(id);
  });

  test("@last and - name the newest top-level run, never one of its steps", async () => {
    const h = home();
    const first = await liData(["agent", "--detach", "mock/echo", "one"], { env: h.env });
    const flow = await liData(["o", "flow", "--detach", "--model", "mock/echo", "goal\n- a\n- b"], { env: h.env });
    await terminal(h.env, first.id);
    await terminal(h.env, flow.id);
    for (const alias of ["@last", "-", "@LAST"]) expect((await liData(["job", "status", alias], { env: h.env })).jobs[0].id).toBe(flow.id);
    expect((await liData(["state", "show", "@last"], { env: h.env })).record.id).toBe(flow.id);
    const none = await li(["--machine", "job", "status", "@last"], { env: home().env });
    expect([none.code, none.json.error.kind]).toEqual([1, "not_found"]);
    expect(none.json.error.message).toMatch(/there is none yet/);
  });

  test("the malformed-id hint shows the real id shape", async () => {
    const h = home();
    const r = await li(["job", "status", "Not-An-Id!"], { env: h.env });
    expect(r.code).toBe(2);
    const example = /e\.g\. (inv_[0-9a-z]{26});/.exec(r.stderr);
    expect(example).not.toBeNull();
    // The example is the shape li mints: its time part is now.
    const real = await liData(["agent", "--detach", "mock/echo", "x"], { env: h.env });
    expect(example![1].length).toBe(real.id.length);
    expect(example![1].slice(0, 8)).toBe(real.id.slice(0, 8));
    expect(r.stderr).toMatch(/@last/);
    await terminal(h.env, real.id);
  });
});

describe("on a terminal and off it", () => {
  test("piped output has no escape codes; COLUMNS fits it; a status shows local times and the zone once", async () => {
    const h = home();
    const id = (await liData(["agent", "--detach", "--label", "a-rather-long-label-for-a-narrow-terminal", "mock/echo", "x"], { env: h.env })).id;
    await terminal(h.env, id);
    const piped = await li(["job", "list"], { env: h.env });
    expect(piped.stdout).not.toMatch(ESC);
    expect(piped.stdout).toMatch(/^ID\s+KIND\s+STATUS\s+AGE\s+TOOK\s+MODEL\s+LABEL\s+REASON\s+HOST\n/);
    expect(piped.stdout).toMatch(/ago|just now/);
    const narrow = await li(["job", "list"], { env: { ...h.env, COLUMNS: "50" } });
    for (const l of narrow.stdout.trim().split("\n").slice(0, -1)) expect(l.length).toBeLessThanOrEqual(50);
    const one = await li(["job", "status", id], { env: { ...h.env, TZ: "Asia/Kolkata" } });
    expect(one.stdout).toMatch(/^created_at\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \((just now|\d+s ago)\)$/m);
    expect(one.stdout.match(/UTC\+05:30/g)).toHaveLength(1);
    const raw0 = (await liData(["job", "status", id], { env: h.env })).jobs[0];
    const kolkata = new Date(Date.parse(raw0.created_at) + 5.5 * 3600 * 1000).toISOString().replace("T", " ").slice(0, 19);
    expect(one.stdout).toMatch(new RegExp(`^created_at\\s+${kolkata}`, "m"));
    // Machine output stays raw: ISO times, no ages.
    const raw = (await liData(["job", "status", id], { env: h.env })).jobs[0];
    expect(raw.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(raw).not.toHaveProperty("age");
  });

  test("in a terminal, statuses are coloured and the table fits its width; NO_COLOR turns colour off", async () => {
    const h = home();
    const id = (await liData(["agent", "--detach", "--label", "x".repeat(60), "mock/echo", "x"], { env: h.env })).id;
    await terminal(h.env, id);
    const coloured = liInPty(["job", "list"], { env: h.env, cols: 70 });
    expect(await coloured.exit).toBe(0);
    expect(coloured.output()).toContain("\x1b[32mcompleted\x1b[0m");
    const visible = coloured.output().replace(/\x1b\[[0-9;]*m/g, "").split("\r\n").filter(Boolean);
    for (const l of visible) expect(l.length).toBeLessThanOrEqual(70);
    const plain = liInPty(["job", "list"], { env: { ...h.env, NO_COLOR: "1" }, cols: 70 });
    expect(await plain.exit).toBe(0);
    expect(plain.output()).not.toMatch(ESC);
    expect(plain.output()).toContain("completed");
  });
});

describe("a foreground run's end line (issue 18, item 4)", () => {
  /** `li agent mock/echo WORDS` with stdout and stderr as given: file descriptors of files in the home. */
  async function foreground(h: { env: NodeJS.ProcessEnv }, words: string, stdout: number, stderr: number, machine = false) {
    const { spawn } = await import("node:child_process");
    const { LI_BIN } = await import("./helpers/li.js");
    const child = spawn(process.execPath, [LI_BIN, ...(machine ? ["--machine"] : []), "agent", "mock/echo", words], { env: h.env, stdio: ["ignore", stdout, stderr] });
    return new Promise<number | null>((resolve) => child.on("close", resolve));
  }

  test("stdout and stderr in one file (> log 2>&1): the status line starts on a line of its own", async () => {
    const fs = await import("node:fs");
    const h = home();
    const log = `${h.home}/one.log`;
    const fd = fs.openSync(log, "w");
    expect(await foreground(h, "hello from li", fd, fd)).toBe(0);
    fs.closeSync(fd);
    const lines = fs.readFileSync(log, "utf8").split("\n");
    expect(lines[1]).toBe("hello from li");
    expect(lines[2]).toMatch(/^li: invocation inv_\S+ completed in /);
  });

  test("stdout apart from stderr gets the run's bytes exactly; machine output is one JSON object, unchanged", async () => {
    const fs = await import("node:fs");
    const h = home();
    const [out, err] = [`${h.home}/out.log`, `${h.home}/err.log`];
    const [o, e] = [fs.openSync(out, "w"), fs.openSync(err, "w")];
    expect(await foreground(h, "hello from li", o, e)).toBe(0);
    expect(fs.readFileSync(out, "utf8")).toBe("hello from li");
    expect(fs.readFileSync(err, "utf8")).toMatch(/^li: invocation \S+ mock\/echo: started; Ctrl-C cancels it\nli: invocation \S+ completed in /);
    const m = fs.openSync(`${h.home}/machine.log`, "w");
    const me = fs.openSync(`${h.home}/machine-err.log`, "w");
    expect(await foreground(h, "hello from li", m, me, true)).toBe(0);
    expect(JSON.parse(fs.readFileSync(`${h.home}/machine.log`, "utf8"))).toMatchObject({ ok: true, data: { status: "completed" } });
    // Under --machine the run streams to stderr, where the end line follows on a line of its own.
    expect(fs.readFileSync(`${h.home}/machine-err.log`, "utf8")).toMatch(/\nhello from li\nli: invocation \S+ completed in /);
    for (const f of [o, e, m, me]) fs.closeSync(f);
  });
});

describe("a HOST column in the human views (issue 22, section 4)", () => {
  test("li wait, li monitor and li schedule runs show which host each run is on", async () => {
    const h = home();
    const env = { ...h.env, LI_HOST: "build-7", COLUMNS: "250" };
    const ok = await liData(["agent", "mock/echo", "fine"], { env });
    const failed = await liData(["agent", "--detach", "mock/fail:3", "broken"], { env });
    await terminal(env, failed.id);
    const hang = await liData(["agent", "--detach", "mock/hang", "busy"], { env });
    const headerAndRow = (out: string, header: RegExp) => {
      const lines = out.split("\n");
      const at = lines.findIndex((l) => header.test(l));
      expect(at).toBeGreaterThanOrEqual(0);
      return { header: lines[at], row: lines[at + 1] };
    };
    const w = await li(["wait", ok.id], { env });
    const wt = headerAndRow(w.stdout, /^ID\s+KIND/);
    expect(wt.header).toMatch(/\sHOST$/);
    expect(wt.row).toMatch(/\sbuild-7$/);

    const m = await li(["monitor"], { env });
    const active = m.stdout.slice(m.stdout.indexOf("active ("));
    const at = headerAndRow(active, /^ID\s+KIND/);
    expect(at.header).toMatch(/\sHOST$/);
    expect(at.row).toMatch(/build-7$/);
    const failures = m.stdout.slice(m.stdout.indexOf("recent failures:"));
    const ft = headerAndRow(failures, /^ID\s+KIND/);
    expect(ft.header).toMatch(/\sHOST$/);
    expect(ft.row).toMatch(/\sbuild-7$/);

    await liData(["schedule", "create", "hosted", "--cron", "0 0 1 1 *", "--timezone", "UTC", "mock/echo", "from hosted"], { env });
    const t = await liData(["schedule", "trigger", "hosted"], { env });
    await terminal(env, t.id);
    const runs = await li(["schedule", "runs", "hosted"], { env });
    const rt = headerAndRow(runs.stdout, /^ID\s+TRIGGER/);
    expect(rt.header).toMatch(/\sHOST$/);
    expect(rt.row).toMatch(/\sbuild-7$/);
    expect((await liData(["schedule", "runs", "hosted"], { env })).runs[0].host).toBe("build-7");
    await li(["kill", "--grace", "0", hang.id], { env });
  });
});

describe("--host implies --detach (issue 22, section 4)", () => {
  test("help says so, and a foreground submission with --host says so on stderr (never under --machine)", async () => {
    const h = home();
    expect((await li(["agent", "--help"], { env: h.env })).stdout.replace(/\s+/g, " ")).toContain("--host implies --detach");
    const r = await li(["agent", "--host", "any", "mock/echo", "placed"], { env: h.env });
    expect(r.code).toBe(0);
    const id = /\b(inv_\w+)/.exec(r.stdout)![1];
    expect(r.stderr).toContain(`li: --host places ${id} for a host daemon (li host run) to start, so it runs detached, as with --detach; li wait ${id} waits for its end`);
    const detached = await li(["agent", "--detach", "--host", "any", "mock/echo", "placed"], { env: h.env });
    expect(detached.stderr).not.toContain("runs detached");
    const m = await li(["--machine", "agent", "--host", "any", "mock/echo", "placed"], { env: h.env });
    expect(m.stderr).not.toContain("runs detached");
    for (const x of [id, /\b(inv_\w+)/.exec(detached.stdout)![1], m.json.data.id]) await li(["kill", x], { env: h.env });
  });
});

describe("the README's first command (issue 22, section 4)", () => {
  test("its output ends each line, even where stdout is read apart from stderr: the list's header starts a line of its own", async () => {
    const fs = await import("node:fs");
    const path = await import("node:path");
    const { execFileSync } = await import("node:child_process");
    const { ROOT } = await import("./helpers/li.js");
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const first = /```sh\n(npm ci && npm run build && .*)\n```/.exec(readme)![1];
    // Everything after the install and build, run as written from the checkout.
    const command = first.replace(/^npm ci && npm run build && /, "");
    const h = home();
    const out = execFileSync("sh", ["-c", command], { cwd: ROOT, env: h.env, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    expect(out).toMatch(/^hello from li\n+ID +KIND +STATUS/);
  });
});
