/**
 * Played as a determined agent in an isolated run under --sandbox workspace with a check: the
 * check runs what the agent left (its Makefile), contained and without network, but its output is
 * the run's (`li job diff`, the console). The model gateway keeps the API keys out of the agent's
 * sandbox (issue 47); the check must not hand them back: no provider's key, nor an endpoint's,
 * reaches the check's environment. Judged by the check's recorded output.
 */
import fs from "node:fs";
import path from "node:path";
import { makeRepo } from "./helpers/git-repos.js";
import { terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-attack-check.test.ts");

describeSandbox("a sandboxed run's check and the model API keys", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-check-");

  test("the agent's Makefile prints the keys in the check: none is there, the rest of the environment is", async () => {
    const h = homes();
    const scratch = scratchDir();
    const repo = makeRepo(scratch, { "Makefile": "test:\n\t@echo ok\n", "a.txt": "a\n" }, "repo");
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `endpoints:\n  mine: {base_url: "http://127.0.0.1:9/v1", api_key_env: MY_ENDPOINT_KEY}\n`);
    const keys = { ANTHROPIC_API_KEY: "sk-ant-SECRET-1", OPENAI_API_KEY: "sk-openai-SECRET-2", GEMINI_API_KEY: "gem-SECRET-3", MY_ENDPOINT_KEY: "endpoint-SECRET-4" };
    const env = { ...h.env, ...keys, LI_TEST_HOSTILE_MOCK: "1", LI_TEST_MARK: "visible" };
    const recipe = Object.keys(keys).map((k) => `${k}=$$${k}`).join(" ");
    const evil = `sh printf 'test:\\n\\t@echo "${recipe} MARK=$$LI_TEST_MARK"\\n' > Makefile`;
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "--isolate", "worktree", "--check-cmd", "make test", "mock/hostile", evil], { env, cwd: repo });
    await terminal(env, r.id, 60_000);
    const check = (await liData(["job", "diff", r.id], { env })).change.check;
    expect(check).toMatchObject({ command: "make test", exit_code: 0 });
    // The agent's recipe ran, with the environment it names.
    expect(check.output_tail).toContain("MARK=visible");
    expect(check.output_tail).toContain("ANTHROPIC_API_KEY= ");
    for (const secret of Object.values(keys)) expect(check.output_tail).not.toContain(secret);
  }, 90_000);
});
