/**
 * Issue 45, item 8: the exec-only copies that make li's processes inside a workspace sandbox
 * non-dumpable (src/runtime/sandbox/exec-only.ts). The cache: one copy per source (its path,
 * device, inode, size, mtime), mode 0111 and the user's; a kill -9 mid-copy leaves a temporary
 * file that is never used and is removed once its maker is gone; a copy not as li made it is made
 * again; a full disk is an error naming what to do, and a run then does not start. Which programs
 * get one (exec-only-programs.ts): node, a script's interpreter, codex's native binary; never a shell.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execOnlyBinds, execOnlyCopy } from "../src/runtime/sandbox/exec-only.js";
import { sandboxPrograms } from "../src/runtime/sandbox/exec-only-programs.js";
import { cacheEntries, LEGACY_MS, pruneCache, STALE_MS } from "../src/runtime/sandbox/exec-only-prune.js";
import { terminal, useHomes, output } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";
import { useTinyFs } from "./helpers/tinyfs.js";

const scratch = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-exec-only-")));

describe("the exec-only copies' cache", () => {
  let dir: string;
  let src: string;
  beforeEach(() => {
    dir = scratch();
    src = path.join(dir, "prog");
    fs.copyFileSync("/bin/true", src);
    fs.chmodSync(src, 0o755);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("a copy is mode 0111 and the user's, made once per source, and again for a changed source", () => {
    const cache = path.join(dir, "cache", "deeper");
    const a = execOnlyCopy(src, cache);
    const st = fs.statSync(a);
    expect(st.mode & 0o7777).toBe(0o111);
    expect(st.uid).toBe(process.geteuid!());
    expect(st.size).toBe(fs.statSync(src).size);
    expect(fs.statSync(cache).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.dirname(cache)).mode & 0o777).toBe(0o700);
    // Reused as it is: the same file.
    expect(execOnlyCopy(src, cache)).toBe(a);
    expect(fs.statSync(a).ino).toBe(st.ino);
    // An upgraded program (a new mtime) gets its own copy.
    fs.utimesSync(src, new Date(), new Date(Date.now() + 5_000));
    expect(execOnlyCopy(src, cache)).not.toBe(a);
    // A symlink to the program is the program.
    fs.symlinkSync(src, path.join(dir, "link"));
    expect(execOnlyCopy(path.join(dir, "link"), cache)).toBe(execOnlyCopy(src, cache));
  });

  test("a copy made readable, or cut short, is made again", () => {
    const cache = path.join(dir, "cache");
    const a = execOnlyCopy(src, cache);
    fs.chmodSync(a, 0o755);
    expect(execOnlyCopy(src, cache)).toBe(a);
    expect(fs.statSync(a).mode & 0o7777).toBe(0o111);
    fs.chmodSync(a, 0o644);
    fs.truncateSync(a, 10);
    execOnlyCopy(src, cache);
    expect(fs.statSync(a).size).toBe(fs.statSync(src).size);
  });

  test("a kill -9 mid-copy leaves a temporary file that is never used, and the next copy removes it once its maker is gone", async () => {
    const cache = path.join(dir, "cache");
    fs.mkdirSync(cache, { mode: 0o700 });
    // A process that is gone (it has exited and been waited for), and one that is alive.
    const gone = spawn("true");
    await new Promise((r) => gone.on("exit", r));
    const alive = spawn("sleep", ["60"]);
    try {
      const dead = path.join(cache, `prog-0123456789abcdef.tmp-${gone.pid}-abc`);
      const live = path.join(cache, `prog-0123456789abcdef.tmp-${alive.pid}-def`);
      fs.writeFileSync(dead, "half a program");
      fs.writeFileSync(live, "a copy being made");
      const a = execOnlyCopy(src, cache);
      expect(fs.existsSync(dead)).toBe(false);
      expect(fs.existsSync(live)).toBe(true);
      expect(fs.statSync(a).size).toBe(fs.statSync(src).size);
    } finally {
      alive.kill("SIGKILL");
    }
  });

  test("the binds: each program's copy over its real path, once per program", () => {
    const cache = path.join(dir, "cache");
    fs.symlinkSync(src, path.join(dir, "link"));
    const args = execOnlyBinds([src, path.join(dir, "link")], cache);
    expect(args).toEqual(["--ro-bind", execOnlyCopy(src, cache), src]);
  });

  test("an upgraded program's old copy goes once no run has used it for an hour; the current one stays, whatever its age", () => {
    const cache = path.join(dir, "cache");
    const old = execOnlyCopy(src, cache);
    fs.utimesSync(src, new Date(), new Date(Date.now() + 5_000));
    const cur = execOnlyCopy(src, cache);
    const byName = () => Object.fromEntries(cacheEntries(cache).map((e) => [path.join(cache, e.name), e]));
    expect(byName()[old]).toMatchObject({ stale: "source_changed", removable: false });
    expect(byName()[cur]).toMatchObject({ stale: null, removable: false });
    // Used a moment ago (a run that picked it just before the upgrade may still be starting): kept.
    expect(pruneCache(cache)).toEqual([]);
    expect(fs.existsSync(old)).toBe(true);
    // An hour and more later: the old copy and its record go; the current one stays, however old.
    const later = Date.now() + STALE_MS + 60_000;
    expect(pruneCache(cache, later)).toEqual([path.basename(old)]);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(`${old}.src`)).toBe(false);
    expect(pruneCache(cache, Date.now() + 365 * 24 * 3600_000)).toEqual([]);
    expect(fs.existsSync(cur)).toBe(true);
    // A removed program's copy goes too; a use marks it used, so it is kept for an hour after that.
    fs.rmSync(src);
    expect(byName()[cur]).toMatchObject({ stale: "source_changed" });
    expect(pruneCache(cache, later)).toEqual([path.basename(cur)]);
  });

  test("a copy with no record of its source (made before the records) is kept for 30 days after its last use, and a use records it", () => {
    const cache = path.join(dir, "cache");
    const a = execOnlyCopy(src, cache);
    fs.rmSync(`${a}.src`);
    expect(cacheEntries(cache)).toEqual([expect.objectContaining({ name: path.basename(a), stale: "unrecorded", removable: false })]);
    expect(pruneCache(cache, Date.now() + STALE_MS * 2)).toEqual([]);
    expect(pruneCache(cache, Date.now() + LEGACY_MS + 60_000)).toEqual([path.basename(a)]);
    // Made again on its next use, and recorded: current from then on.
    const b = execOnlyCopy(src, cache);
    expect(b).toBe(a);
    expect(cacheEntries(cache)).toEqual([expect.objectContaining({ stale: null })]);
    execOnlyCopy(src, cache);
    fs.rmSync(`${a}.src`);
    execOnlyCopy(src, cache);
    expect(cacheEntries(cache)).toEqual([expect.objectContaining({ stale: null })]);
  });

  test("a copy removed while a process runs it (as a sandbox's bind holds it) leaves that process running; a temporary record of a killed writer is swept", async () => {
    const cache = path.join(dir, "cache");
    fs.copyFileSync("/bin/sleep", src);
    const a = execOnlyCopy(src, cache);
    const p = spawn(a, ["60"]);
    try {
      await new Promise((r) => p.on("spawn", r));
      fs.utimesSync(src, new Date(), new Date(Date.now() + 5_000));
      expect(pruneCache(cache, Date.now() + STALE_MS + 60_000)).toEqual([path.basename(a)]);
      expect(p.exitCode).toBeNull();
      expect(fs.readlinkSync(`/proc/${p.pid}/exe`)).toContain("(deleted)");
    } finally {
      p.kill("SIGKILL");
    }
    // A record cut short by a kill -9 (its writer gone) is removed by the next copy's sweep.
    const gone = spawn("true");
    await new Promise((r) => gone.on("exit", r));
    const half = path.join(cache, `x-0123456789abcdef.src.tmp-${gone.pid}-r`);
    fs.writeFileSync(half, "");
    execOnlyCopy(src, cache);
    expect(fs.existsSync(half)).toBe(false);
  });

  test("a folder another user could write is refused, naming the variable that moves it", () => {
    const cache = path.join(dir, "cache");
    fs.mkdirSync(cache, { mode: 0o700 });
    fs.chmodSync(cache, 0o777);
    expect(() => execOnlyCopy(src, cache)).toThrow(/no one else can write.*LI_EXEC_ONLY_DIR/);
    expect(fs.readdirSync(cache)).toEqual([]);
  });

  test("a source that does not exist is an error naming it", () => {
    expect(() => execOnlyBinds([path.join(dir, "nothing")], path.join(dir, "cache"))).toThrow(/nothing/);
  });
});

describe("which programs a sandbox makes exec-only", () => {
  test("the worker's node, node on PATH for a #!/usr/bin/env node CLI and strace; not socat (the bridges run outside the sandbox); never a shell", () => {
    const bin = scratch();
    try {
      fs.writeFileSync(path.join(bin, "cli"), "#!/usr/bin/env node\nconsole.log(1)\n", { mode: 0o755 });
      fs.writeFileSync(path.join(bin, "shcli"), "#!/bin/sh\necho 1\n", { mode: 0o755 });
      const PATH = `${bin}:${process.env.PATH}`;
      const got = sandboxPrograms(["cli"], "mock", PATH);
      expect(got).toEqual(expect.arrayContaining([fs.realpathSync(process.execPath), fs.realpathSync("/usr/bin/strace")]));
      expect(got).not.toContain(fs.realpathSync("/usr/bin/socat"));
      expect(got.some((p) => /(^|\/)(ba|da)?sh$/.test(p))).toBe(false);
      expect(sandboxPrograms(["shcli"], "mock", PATH).some((p) => /(^|\/)(ba|da)?sh$/.test(p))).toBe(false);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  test("codex's node launcher brings its native binary", () => {
    const root = scratch();
    try {
      const pkg = path.join(root, "node_modules", "@openai", "codex");
      const native = path.join(root, "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex");
      fs.mkdirSync(path.join(pkg, "bin"), { recursive: true });
      fs.mkdirSync(path.dirname(native), { recursive: true });
      fs.writeFileSync(path.join(pkg, "bin", "codex.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
      fs.copyFileSync("/bin/true", native);
      const bin = path.join(root, "bin");
      fs.mkdirSync(bin);
      fs.symlinkSync(path.join(pkg, "bin", "codex.js"), path.join(bin, "codex"));
      expect(sandboxPrograms(["codex"], "codex", `${bin}:${process.env.PATH}`)).toContain(native);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

const describeSandbox = sandboxSuite("sandbox-exec-only.test.ts");
const tiny = useTinyFs(8 * 1024 * 1024);

describeSandbox("a sandboxed run whose exec-only copies cannot be made", () => {
  const homes = useHomes({ stopRuns: true });
  (tiny.available ? test : test.skip)("on a full disk the run does not start, saying which copy and what to do; no temporary file is left", async () => {
    const h = homes();
    const cache = path.join(tiny.dir, "exec-only");
    const env = { ...h.env, LI_EXEC_ONLY_DIR: cache };
    const work = scratch();
    try {
      const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/echo", "hello"], { env, cwd: work });
      const done = await terminal(env, r.id, 60_000);
      expect(done.status).toBe("failed");
      const text = JSON.stringify(await output(env, r.id)) + JSON.stringify(done);
      expect(text).toMatch(/exec-only copy of \S*node/);
      expect(text).toContain("ENOSPC");
      expect(text).toContain("LI_EXEC_ONLY_DIR");
      expect(fs.readdirSync(cache).filter((n) => n.includes(".tmp-"))).toEqual([]);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
