/**
 * Hostile callers, item 2: the files a file argument may name. Under LI_MCP_FILE_ROOTS (set by
 * the MCP server) only files under the roots, after symlinks; at a terminal anything the user can
 * read. Always: regular files only, reads bounded by the cap, no file text in any error.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BODY_CAP_BYTES } from "../src/lifecycle/teams.js";
import { PLAN_LIMITS } from "../src/runtime/flow/plan.js";
import { PROMPT_CAP_BYTES } from "../src/runtime/submit/prompt.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { type Home, li, liData, type LiRun } from "./helpers/li.js";
import { refusal } from "./helpers/refusal.js";

const home = useHomes({ stopRuns: true });
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "li-roots-"));
  dirs.push(d);
  return d;
}

/** Valid as a prompt, a message body and a YAML plan alike. */
const CONTENT = 'steps:\n  - {"id": "a", "task": "say hi"}\n';

function put(dir: string, name: string, data: string | Buffer = CONTENT): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, data);
  return file;
}

const withRoots = (h: Home, roots: string[], settings = false) => ({ ...h.env, LI_MCP_FILE_ROOTS: JSON.stringify({ roots, settings }) });

/** One command per file argument; `prepare` makes what it needs besides the file. */
interface FileFlag {
  flag: string;
  field: string;
  argv: (file: string) => string[];
  prepare?: (h: Home) => Promise<void>;
  /** Writes so far, to show a refusal recorded nothing. */
  written: (env: NodeJS.ProcessEnv) => Promise<number>;
}

const jobCount = async (env: NodeJS.ProcessEnv) => (await liData(["job", "list", "--limit", "1000"], { env })).jobs.length;

const FLAGS: FileFlag[] = [
  { flag: "--prompt-file", field: "prompt_file", argv: (f) => ["agent", "mock/echo", "--prompt-file", f], written: jobCount },
  { flag: "--plan-file", field: "plan_file", argv: (f) => ["o", "flow", "--detach", "--workers", "mock/echo", "--plan-file", f, "goal"], written: jobCount },
  {
    flag: "--body-file",
    field: "body_file",
    argv: (f) => ["team", "send", "t", "--from", "a", "--to", "b", "--body-file", f],
    prepare: async (h) => void (await liData(["team", "create", "t", "--member", "a", "b"], { env: h.env })),
    written: async (env) => (await liData(["team", "show", "t"], { env })).message_count,
  },
];

async function run(f: FileFlag, file: string, env: NodeJS.ProcessEnv): Promise<LiRun> {
  return li(["--machine", ...f.argv(file)], { env, timeoutMs: 20000 });
}

/** Refused as invalid_input, with nothing written and no file text anywhere in the answer. */
async function refused(f: FileFlag, file: string, env: NodeJS.ProcessEnv): Promise<any> {
  const before = await f.written(env);
  const r = await run(f, file, env);
  expect([f.flag, r.json?.ok, r.json?.error?.kind, r.code]).toEqual([f.flag, false, "invalid_input", 2]);
  expect(await f.written(env)).toBe(before);
  expect(r.stdout + r.stderr).not.toContain("say hi");
  return r.json.error;
}

async function accepted(f: FileFlag, file: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await run(f, file, env);
  expect([f.flag, r.json?.ok, r.json?.error]).toEqual([f.flag, true, undefined]);
  // A detached flow records its steps as it goes: let it end, so later counts are stable.
  if (r.json.data.kind === "session") await terminal(env, r.json.data.id);
}

describe.each(FLAGS)("$flag under LI_MCP_FILE_ROOTS", (f) => {
  let h: Home;
  let root: string;
  let outside: string;
  beforeAll(async () => {
    h = home();
    root = tempDir();
    outside = tempDir();
    await f.prepare?.(h);
  });

  test("a file inside the roots is read", async () => {
    await accepted(f, put(root, "in.txt"), withRoots(h, [root]));
  });

  test("a file outside is refused, naming the parameter and the roots; at a terminal it is read", async () => {
    const file = put(outside, "out.txt");
    const err = await refused(f, file, withRoots(h, [root]));
    expect(err.message).toContain(`${f.flag} must be a file under one of: ${root} (the MCP client's roots)`);
    expect(err.detail).toMatchObject({ field: f.field, roots: [root] });
    await accepted(f, file, h.env);
  });

  test("a symlink inside pointing outside, a .. escape and a sibling sharing the root's prefix are refused", async () => {
    const target = put(outside, "target.txt");
    const link = path.join(root, "link.txt");
    fs.symlinkSync(target, link);
    const sibling = fs.mkdtempSync(root + "-");
    dirs.push(sibling);
    const env = withRoots(h, [root]);
    // Where the link led is not told.
    expect(JSON.stringify(await refused(f, link, env))).not.toContain(target);
    for (const file of [`${root}/../${path.basename(outside)}/target.txt`, put(sibling, "s.txt")])
      expect((await refused(f, file, env)).message).toContain("the MCP client's roots");
  });

  test("a symlink inside pointing inside is read", async () => {
    const link = path.join(root, "inner-link.txt");
    fs.symlinkSync(put(root, "inner.txt"), link);
    await accepted(f, link, withRoots(h, [root]));
  });

  test("stdin (-) is refused under the roots", async () => {
    const err = await refused(f, "-", withRoots(h, [root]));
    expect(err.message).toContain("stdin");
  });

  test("a missing file outside the roots gets the roots refusal, not whether it exists", async () => {
    const err = await refused(f, path.join(outside, "absent.txt"), withRoots(h, [root]));
    expect(err.message).toContain("must be a file under one of");
    expect((await refused(f, path.join(root, "absent.txt"), withRoots(h, [root]))).message).toContain("ENOENT");
  });
});

describe.each(FLAGS)("$flag with roots from the user settings", (f) => {
  test("mcp.file_roots is honoured only when the server says settings: true", async () => {
    const h = home();
    await f.prepare?.(h);
    const root = tempDir();
    const extra = tempDir();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `mcp:\n  file_roots: [${JSON.stringify(extra)}]\n`);
    const file = put(extra, "via-settings.txt");
    const err = await refused(f, file, withRoots(h, [root], false));
    expect(err.detail.roots).toEqual([root]);
    await accepted(f, file, withRoots(h, [root], true));
    const denied = await refused(f, put(tempDir(), "elsewhere.txt"), withRoots(h, [root], true));
    expect(denied.message).toContain(`${extra} (mcp.file_roots in the user settings)`);
    expect(denied.detail.roots).toEqual([root, extra]);
  });
});

describe("the roots contract", () => {
  const prompt = FLAGS[0];

  test("a malformed LI_MCP_FILE_ROOTS refuses every file argument rather than reading unbounded", async () => {
    const h = home();
    const file = put(tempDir(), "p.txt");
    for (const value of ["", "not json", '{"roots": "/tmp"}', '{"roots": ["relative/dir"]}', '{"roots": [], "settings": "yes"}']) {
      const err = await refused(prompt, file, { ...h.env, LI_MCP_FILE_ROOTS: value });
      expect([value, err.message]).toEqual([value, expect.stringContaining("LI_MCP_FILE_ROOTS is malformed")]);
    }
  });

  test("no roots at all refuses every file", async () => {
    const h = home();
    const err = await refused(prompt, put(tempDir(), "p.txt"), withRoots(h, []));
    expect(err.detail.roots).toEqual([]);
  });

  test("a relative mcp.file_roots entry is a settings error naming the key; project settings may not set it", async () => {
    const h = home();
    fs.writeFileSync(path.join(h.home, "settings.yaml"), "mcp:\n  file_roots: [relative/dir]\n");
    const err = await refused(prompt, put(tempDir(), "p.txt"), withRoots(h, [tempDir()], true));
    expect(err.message).toContain("mcp.file_roots");

    const project = tempDir();
    fs.mkdirSync(path.join(project, ".li"));
    fs.writeFileSync(path.join(project, ".li", "settings.yaml"), `mcp:\n  file_roots: [${JSON.stringify(project)}]\n`);
    const r = await li(["--machine", "hooks", "trust", path.join(project, ".li", "settings.yaml")], { env: home().env });
    expect(r.json.error.message).toContain("only the user settings file");
  });
});

describe("always: regular files only, bounded reads, no file text in errors", () => {
  test.each(FLAGS)("$flag: a FIFO is refused at once, at a terminal and under the roots", async (f) => {
    const h = home();
    await f.prepare?.(h);
    const dir = tempDir();
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    // At once: opening or reading a FIFO nobody writes would block li for good, and run() kills it
    // after 20 s (exit null), which refused() rejects; an answer at all is the proof.
    for (const env of [h.env, withRoots(h, [dir])]) {
      const err = await refused(f, fifo, env);
      expect(err.message).toContain("is a FIFO, not a regular file");
      expect(err.detail.file_type).toBe("fifo");
    }
  });

  test.each(FLAGS)("$flag: /dev/zero and a directory are refused unread", async (f) => {
    const h = home();
    await f.prepare?.(h);
    expect((await refused(f, "/dev/zero", h.env)).detail.file_type).toBe("character_device");
    expect((await refused(f, tempDir(), h.env)).detail.file_type).toBe("directory");
  });

  // Each flag's cap, as li defines it.
  test.each([
    [FLAGS[0], PROMPT_CAP_BYTES],
    [FLAGS[1], PLAN_LIMITS.max_plan_bytes],
    [FLAGS[2], BODY_CAP_BYTES],
  ])("$flag: a file one byte over its cap is refused, and a 5 GB one without reading it", async (f, cap) => {
    const h = home();
    await f.prepare?.(h);
    const dir = tempDir();
    const over = put(dir, "over.txt", Buffer.alloc(cap + 1, "a"));
    expect((await refused(f, over, h.env)).detail).toMatchObject({ field: f.field, cap });
    const huge = path.join(dir, "huge.txt");
    fs.writeFileSync(huge, "");
    fs.truncateSync(huge, 5 * 1024 ** 3);
    expect((await refused(f, huge, h.env)).message).toContain(`over the ${cap}-byte cap`);
    // Without reading it: the reader li uses, run here, reads no more than cap + 1 bytes of it
    // (/proc/self/io's rchar counts every byte this process reads; nothing else runs meanwhile).
    const { readFileArg } = await import("../src/runtime/submit/file-args.js");
    const rchar = () => Number(/^rchar: (\d+)$/m.exec(fs.readFileSync("/proc/self/io", "utf8"))![1]);
    const before = rchar();
    expect(refusal(() => readFileArg(huge, f.flag, cap))).toContain(`over the ${cap}-byte cap`);
    expect(rchar() - before).toBeLessThanOrEqual(cap + 1 + 4096); // + the read of /proc/self/io itself
  });

  test.each([
    ["plan.yaml", "steps:\n  - id: a\n   task: root:$6$SECRET:19000:0:99999:7:::\n", "YAML"],
    ["plan.yaml", "root:$6$SECRET:19000:0:99999:7:::\nsteps: [\n", "YAML"],
    ["plan.json", '{"steps": root:$6$SECRET:19000}', "JSON"],
    ["plan.json", '{"steps": [\n  "root:$6$SECRET"', "JSON"],
  ])("an invalid %s gives a position, never its text", async (name, text, format) => {
    const h = home();
    const file = put(tempDir(), name, text);
    const err = await refused(FLAGS[1], file, h.env);
    expect(err.message).toMatch(new RegExp(`is not valid ${format} \\(line \\d+, column \\d+\\)$`));
    expect(err.detail).toMatchObject({ field: "plan_file", line: expect.any(Number), column: expect.any(Number) });
    const r = await run(FLAGS[1], file, h.env);
    expect(r.stdout + r.stderr).not.toContain("SECRET");
  });
});

describe("the reader itself", () => {
  beforeAll(() => delete process.env.LI_MCP_FILE_ROOTS);

  test("a file whose size fstat understates (/proc) is still cut at cap + 1 bytes and refused", async () => {
    const { readFileArg } = await import("../src/runtime/submit/file-args.js");
    expect(fs.statSync("/proc/self/status").size).toBe(0);
    expect(refusal(() => readFileArg("/proc/self/status", "--body-file", 16))).toContain("over the 16-byte cap");
    expect(readFileArg("/proc/self/status", "--body-file", 1024 * 1024).length).toBeGreaterThan(16);
  });

  test("under means by whole path segments", async () => {
    const { isUnder } = await import("../src/runtime/submit/file-roots.js");
    expect([isUnder("/a/b", "/a/b"), isUnder("/a/b/c", "/a/b"), isUnder("/a/bc", "/a/b"), isUnder("/a", "/a/b"), isUnder("/x", "/")]).toEqual([true, true, false, false, true]);
  });
});
