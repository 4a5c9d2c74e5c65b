/**
 * Played as a determined agent under --sandbox workspace (issue 45, a later review): holes left
 * after the first attacker's fixes. Each is judged outside, on disk: what is in the person's home
 * or tree after the run, and what the person's next git command there runs.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { output, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-attack-s53.test.ts");

describeSandbox("checkout runs whose tree git does not know, or that hold the home", () => {
  const homes = useHomes({ stopRuns: true });
  const scratches: string[] = [];
  afterAll(() => scratches.forEach((s) => fs.rmSync(s, { recursive: true, force: true })));
  const scratchDir = () => {
    const s = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-atk-s53-")));
    scratches.push(s);
    return s;
  };

  test("a run started in the home is refused: the home would be writable whole (a program ahead of the person's on PATH, authorized_keys, a systemd unit)", async () => {
    const h = homes();
    const person = path.join(scratchDir(), "person");
    fs.mkdirSync(path.join(person, ".local", "bin"), { recursive: true });
    const env = { ...h.env, HOME: person, LI_TEST_HOSTILE_MOCK: "1" };
    const planted = [".local/bin/git", ".ssh/authorized_keys", ".config/systemd/user/x.service", ".config/git/config"];
    const prompt = `sh cd ~ && for f in ${planted.join(" ")}; do mkdir -p "$(dirname $f)"; echo pwn > "$f"; done; echo tried`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: person });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("failed");
    expect(JSON.stringify(done)).toContain("sandbox_failed");
    for (const f of planted) expect(fs.existsSync(path.join(person, f))).toBe(false);
    expect(String((await output(env, r.id)).output ?? "") + JSON.stringify(done)).not.toContain("tried");
  }, 90_000);

  test("a tree that is no repository: its files that run code at any depth stay as they were, and the ones the agent made (a .git at its top, a nested one, .vscode/) leave the tree", async () => {
    const h = homes();
    const tree = path.join(scratchDir(), "work");
    fs.mkdirSync(path.join(tree, "sub"), { recursive: true });
    fs.writeFileSync(path.join(tree, "sub", ".envrc"), "echo hi\n");
    const marker = path.join(path.dirname(tree), "PWNED");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const prompt = [
      "sh echo 'touch /tmp/x' >> sub/.envrc; echo appended",
      "sh mkdir -p a/.vscode && echo '{}' > a/.vscode/tasks.json; echo vscode",
      `sh git init -q . && git config core.fsmonitor 'touch ${marker}; false' && git init -q b && git -C b config core.fsmonitor 'touch ${marker}; false'; echo inited`,
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: tree });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    expect((await output(env, r.id)).output).toContain("inited");
    expect(fs.readFileSync(path.join(tree, "sub", ".envrc"), "utf8")).toBe("echo hi\n");
    for (const made of [".git", "b/.git", "a/.vscode"]) expect(fs.existsSync(path.join(tree, made))).toBe(false);
    expect(done.sandbox.held).toEqual(expect.arrayContaining([".git", "b/.git", "a/.vscode"]));
    // The person's next git command in either directory runs nothing of the agent's.
    for (const dir of [tree, path.join(tree, "b")]) {
      try {
        execFileSync("git", ["status"], { cwd: dir, stdio: "ignore", env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(tree) } });
      } catch {}
    }
    expect(fs.existsSync(marker)).toBe(false);
  }, 90_000);
});
