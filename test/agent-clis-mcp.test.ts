/**
 * `li mcp config codex` and `li mcp config gemini`, used as printed by the real CLIs (issue 18,
 * item 7): codex parses the table and lists li; a codex run calls li's tool through its MCP
 * server (the fake Responses API asks for the call, and the tool's answer reaches the next
 * request), which it refuses under any approval mode but the printed one; gemini lists li as
 * connected, and a headless gemini calls li's tool with the printed entry, trusted, and is never
 * offered it without that trust.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { functionResponse, offeredFunctions, startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses, toolOutput } from "./fixtures/fake-apis/openai-responses.js";
import type { FakeApi } from "./fixtures/fake-apis/server.js";
import { CLI_BIN, codexEnv, describeReal, geminiEnv } from "./helpers/agent-clis.js";
import { jobStatus, useHomes } from "./helpers/fixtures.js";
import { LI_BIN, liData } from "./helpers/li.js";

const run = promisify(execFile);
const T = 120_000;

describeReal("li mcp config, as printed, in the real codex and gemini", () => {
  const homes = useHomes({ stopRuns: true });
  let fake: FakeApi;
  beforeAll(async () => (fake = await startResponses({ call: { name: (n) => n === "mcp__li__request", arguments: { ops: [{ op: "server.info" }] } } })));
  afterAll(() => fake?.close());

  async function codexSetup(edit: (toml: string) => string = (t) => t) {
    const h = homes();
    const printed = await liData(["mcp", "config", "codex"], { env: h.env });
    const env = { ...h.env, ...codexEnv(h.home, fake.url, "\n" + edit(printed.toml)) };
    const cwd = path.join(h.home, "work");
    fs.mkdirSync(cwd);
    return { h, env, cwd };
  }

  test("codex mcp list reads the printed table: li, over stdio, with this LI_HOME", async () => {
    const { h, env } = await codexSetup();
    const { stdout } = await run(path.join(CLI_BIN, "codex"), ["mcp", "list", "--json"], { env, timeout: 60_000 });
    const li = JSON.parse(stdout).find((s: any) => s.name === "li");
    expect(li).toMatchObject({ enabled: true, transport: { type: "stdio", command: process.execPath, args: [LI_BIN, "mcp"], env: { LI_HOME: h.home } } });
  }, T);

  test("a codex run calls li's tool through li mcp, and the answer reaches the model", async () => {
    const { h, env, cwd } = await codexSetup();
    const sent = fake.requests.length;
    const r = await liData(["agent", "--cwd", cwd, "codex/gpt-5", "ask", "li"], { env });
    expect((await jobStatus(env, r.id)).status).toBe("completed");
    const outputs = fake.requests.slice(sent).map(toolOutput).filter((o): o is string => o !== null);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toContain(`"li_home":${JSON.stringify(h.home)}`);
    const shown = (await liData(["job", "output", "--console", r.id], { env })).output;
    expect(shown).toContain("[mcp li.request] completed");
  }, T);

  // codex starts its first turn about 2 s after launch without an optional server that has not
  // answered yet; the printed `required = true` makes it wait (CI saw the tool missing under load).
  test("li starting slowly (3 s) is still there for the first turn", async () => {
    const { h, env, cwd } = await codexSetup((t) => {
      const slow = path.join(path.dirname(t.match(/LI_HOME = "(.*)"/)![1]), "slow-li.sh");
      fs.writeFileSync(slow, `#!/bin/sh\nsleep 3\nexec "$@"\n`, { mode: 0o755 });
      return t.replace(/^command = (.*)$/m, `command = ${JSON.stringify(slow)}`).replace(/^args = \[/m, `args = [${JSON.stringify(process.execPath)}, `);
    });
    const sent = fake.requests.length;
    const r = await liData(["agent", "--cwd", cwd, "codex/gpt-5", "ask", "li"], { env });
    const outputs = fake.requests.slice(sent).map(toolOutput).filter((o): o is string => o !== null);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toContain(`"li_home":${JSON.stringify(h.home)}`);
    expect((await jobStatus(env, r.id)).status).toBe("completed");
  }, T);

  test.each(["auto", "writes", "prompt"])("with approval_mode %s codex exec refuses the call, and the console says why", async (mode) => {
    const { env, cwd } = await codexSetup((t) => t.replace(/^approval_mode = .*$/m, `approval_mode = "${mode}"`));
    const sent = fake.requests.length;
    const r = await liData(["agent", "--cwd", cwd, "codex/gpt-5", "ask", "li"], { env });
    const outputs = fake.requests.slice(sent).map(toolOutput).filter((o): o is string => o !== null);
    expect(outputs.join("")).toContain("requires approval");
    const shown = (await liData(["job", "output", "--console", r.id], { env })).output;
    expect(shown).toContain("[mcp li.request] failed: MCP tool call requires approval, but approval policy is never");
  }, T);

  // gemini asks before calling an untrusted server's tools, and a headless gemini has nobody to
  // ask: without the printed "trust": true it never offers li's tool to the model (issue 24).
  test("a headless gemini -p offers li's tool with the printed entry and calls it; without its trust the tool is never offered", async () => {
    const h = homes();
    const printed = await liData(["mcp", "config", "gemini"], { env: h.env });
    expect(printed.config.mcpServers.li.trust).toBe(true);
    expect(printed.note).toMatch(/without\s+asking you[\s\S]*headless gemini[\s\S]*--read-only/);
    const api = await startGemini({ call: { name: (n) => n === "mcp_li_request", args: { ops: [{ op: "server.info" }] } } });
    try {
      const ask = async (config: unknown) => {
        // A folder gemini trusts (as li's runs are, by --skip-trust): it honours "trust" only there.
        const env = { ...h.env, ...geminiEnv(h.home, api.url, config as Record<string, unknown>), GEMINI_CLI_TRUST_WORKSPACE: "true" };
        const sent = api.requests.length;
        const { stdout } = await run(path.join(CLI_BIN, "gemini"), ["--model", "gemini-2.5-flash", "-p", "ask li", "--output-format", "json"], { env, cwd: h.home, timeout: 90_000 });
        return { requests: api.requests.slice(sent), answer: JSON.parse(stdout).response as string };
      };
      const trusted = await ask(printed.config);
      expect(trusted.requests.flatMap(offeredFunctions)).toContain("mcp_li_request");
      const outputs = trusted.requests.map(functionResponse).filter((o): o is string => o !== null);
      expect(outputs.join("")).toContain(JSON.stringify(`"li_home":${JSON.stringify(h.home)}`).slice(1, -1));
      expect(trusted.answer).toContain("tool said:");
      const without = structuredClone(printed.config);
      delete without.mcpServers.li.trust;
      const untrusted = await ask(without);
      expect(untrusted.requests.length).toBeGreaterThan(0);
      expect(untrusted.requests.flatMap(offeredFunctions)).not.toContain("mcp_li_request");
      expect(untrusted.answer).toBe("FAKE ANSWER");
    } finally {
      await api.close();
    }
  }, 2 * T);

  test("gemini mcp list connects to li with the printed mcpServers entry", async () => {
    const h = homes();
    const printed = await liData(["mcp", "config", "gemini"], { env: h.env });
    // A folder gemini trusts (as li's runs are, by --skip-trust): it hides every server from an untrusted one.
    const env = { ...h.env, ...geminiEnv(h.home, "http://127.0.0.1:9", printed.config), GEMINI_CLI_TRUST_WORKSPACE: "true" };
    const { stdout, stderr } = await run(path.join(CLI_BIN, "gemini"), ["mcp", "list"], { env, cwd: h.home, timeout: 60_000 });
    expect(stdout + stderr).toMatch(new RegExp(`✓ li: ${process.execPath} ${LI_BIN} mcp \\(stdio\\) - Connected`));
  }, T);
});
