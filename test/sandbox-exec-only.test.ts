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
