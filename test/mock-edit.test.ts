/**
 * mock/edit (issue 29): the offline model that edits files, so isolated runs and fan-outs have a
 * change to capture. The built mock-agent script is run directly, in a scratch working directory.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { useHomes } from "./helpers/fixtures.js";
import { li, ROOT, sleep, until } from "./helpers/li.js";

const AGENT = path.join(ROOT, "dist", "bundle", "mock-agent.cjs");
let dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function scratch(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-mock-edit-"));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, "cwd"));
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, "cwd", rel), text);
  return dir;
}

function edit(dir: string, prompt: string, worker?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  fs.writeFileSync(path.join(dir, "prompt.txt"), prompt);
  const env = { ...process.env };
  delete env.LI_FANOUT_WORKER;
  if (worker !== undefined) env.LI_FANOUT_WORKER = worker;
  return new Promise((resolve) =>
    execFile(process.execPath, [AGENT, "edit", path.join(dir, "prompt.txt")], { cwd: path.join(dir, "cwd"), env }, (err, stdout, stderr) =>
      resolve({ code: err ? (err as { code?: number }).code ?? null : 0, stdout, stderr }),
    ),
  );
}

const files = (dir: string) => {
  const out: Record<string, string> = {};
  const walk = (rel: string) =>
    fs.readdirSync(path.join(dir, "cwd", rel), { withFileTypes: true }).forEach((e) => {
      if (e.isDirectory()) walk(path.join(rel, e.name));
      else out[path.join(rel, e.name)] = fs.readFileSync(path.join(dir, "cwd", rel, e.name), "utf8");
    });
  walk("");
  return out;
};

const PROMPT = [
  "write a.txt hello\\nworld",
  "append a.txt !\\n",
  "",
  "write deep/er/b.txt back\\\\slash\\tstays",
  "worker 1: write one.txt first",
  "worker 2: write two.txt second",
  "delete gone.txt",
  "write empty.txt",
].join("\n");

test("write, append and delete in the working directory, parents made, \\n and \\\\ decoded; worker lines skipped outside a fan-out", async () => {
  const dir = scratch({ "gone.txt": "bye" });
  const r = await edit(dir, PROMPT);
  expect(r).toEqual({
    code: 0,
    stdout: "edit: write a.txt\nedit: append a.txt\nedit: write deep/er/b.txt\nedit: delete gone.txt\nedit: write empty.txt\n",
    stderr: "",
  });
  expect(files(dir)).toEqual({ "a.txt": "hello\nworld!\n", "deep/er/b.txt": "back\\slash\\tstays", "empty.txt": "" });
});

test("a `worker K: ` line is made only by fan-out worker K (LI_FANOUT_WORKER)", async () => {
  const second = scratch({ "gone.txt": "bye" });
  expect((await edit(second, PROMPT, "2")).stdout).toContain("edit: write two.txt\n");
  expect(Object.keys(files(second)).sort()).toEqual(["a.txt", "deep/er/b.txt", "empty.txt", "two.txt"]);
  const first = scratch({ "gone.txt": "bye" });
  await edit(first, PROMPT, "1");
  expect(files(first)["one.txt"]).toBe("first");
  expect(files(first)["two.txt"]).toBeUndefined();
});

test("a line that is not an edit, or a path outside the working directory: exit 2, the line named, nothing changed", async () => {
  for (const bad of ["write ok.txt fine\nrewrite a.txt x", "write /etc/x y", "write ../up.txt y", "append a/../../up.txt y", "delete a.txt extra"]) {
    const dir = scratch({ "a.txt": "kept" });
    const r = await edit(dir, bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mock-agent: (not an edit|path outside the working directory)/);
    expect(r.stdout).toBe("");
    expect(files(dir)).toEqual({ "a.txt": "kept" });
  }
  const dir = scratch();
  expect((await edit(dir, "frobnicate x")).stderr).toContain('"frobnicate x"');
  // A well-formed edit that cannot be made (deleting what is not there) fails the run: exit 1.
  expect(await edit(dir, "delete missing.txt")).toMatchObject({ code: 1, stderr: expect.stringContaining("delete missing.txt") });
});

test("waitfor PATH holds the edits after it until PATH exists", async () => {
  const dir = scratch();
  const go = path.join(dir, "go");
  const done = edit(dir, `write before.txt 1\nwaitfor ${go}\nwrite after.txt 2`);
  await until(() => fs.existsSync(path.join(dir, "cwd", "before.txt")), 20_000, 20);
  await sleep(500); // a span in which an edit not held would have been made
  expect(files(dir)).toEqual({ "before.txt": "1" });
  fs.writeFileSync(go, "");
  expect((await done).code).toBe(0);
  expect(files(dir)).toEqual({ "before.txt": "1", "after.txt": "2" });
});

const home = useHomes();

test("li runs mock/edit in the run's working directory", async () => {
  const { env } = home();
  const dir = scratch();
  const r = await li(["agent", "--cwd", path.join(dir, "cwd"), "mock/edit", "write from-li.txt made by li"], { env });
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("edit: write from-li.txt\n");
  expect(files(dir)).toEqual({ "from-li.txt": "made by li" });
  expect((await li(["agent", "mock/edits", "x"], { env })).stderr).toContain("mock/edit");
});

test("a line `end` ends the edits: what follows it (a flow step's goal) is not read", async () => {
  const dir = scratch();
  const r = await edit(dir, "write a.txt one\nend\n\nThis is one step of a larger task. The overall goal:\nanything at all");
  expect(r).toMatchObject({ code: 0, stdout: "edit: write a.txt\n" });
  expect(files(dir)).toEqual({ "a.txt": "one" });
});
