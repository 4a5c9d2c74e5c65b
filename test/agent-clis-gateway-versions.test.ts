/**
 * Issue 47's version range, from evidence: which releases of claude, codex and gemini take the
 * base URL li gives them, so their calls go through li's gateway. Opt-in, since it needs many
 * releases installed (not CI's pinned ones): LI_GATEWAY_VERSIONS names a folder of npm prefixes,
 * one per release, named `claude@V`, `codex@V` or `gemini@V` (each made with
 * `npm install --prefix DIR/claude@V @anthropic-ai/claude-code@V`). Each release runs once,
 * unsandboxed with `gateway: on`, against its loopback fake, with every other way off loopback
 * refused (baseEnv): a release that ignored the base URL would reach no fake. It passes when the
 * run completed, its usage is the gateway's (`usage_source: gateway`) and equals the sum the fake
 * reported. Each outcome is printed as a row for docs/gateway.md's table.
 */
import fs from "node:fs";
import path from "node:path";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";
import { recorded, type FakeApi } from "./fixtures/fake-apis/server.js";
import { claudeEnv, codexEnv, geminiEnv } from "./helpers/agent-clis.js";
import { terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";

const DIR = process.env.LI_GATEWAY_VERSIONS;
const releases = DIR && fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((d) => /^(claude|codex|gemini)@\d/.test(d)).sort() : [];
const describeSweep = releases.length ? describe : describe.skip;

const MODELS: Record<string, { model: string; mode: string }> = {
  // Not bypassPermissions: claude refuses it to root outside a sandbox, and the fake asks for no tool.
  claude: { model: "claude/claude-sonnet-4-5", mode: "default" },
  codex: { model: "codex/gpt-5", mode: "workspace-write" },
  gemini: { model: "gemini/gemini-2.5-pro", mode: "yolo" },
};

describeSweep("releases of the agent CLIs through li's model gateway (LI_GATEWAY_VERSIONS)", () => {
  const homes = useHomes({ stopRuns: true });
  const fakes: Record<string, FakeApi> = {};
  beforeAll(async () => {
    fakes.claude = await startAnthropic();
    fakes.codex = await startResponses();
    fakes.gemini = await startGemini();
    for (const f of Object.values(fakes)) f.distinct = true;
  });
  afterAll(() => Promise.all(Object.values(fakes).map((f) => f.close())));

  test.each(releases)("%s: its calls reach the fake through the gateway, metered", async (release) => {
    const cli = release.slice(0, release.indexOf("@"));
    const fake = fakes[cli];
    const h = homes();
    const work = path.join(h.home, "work");
    fs.mkdirSync(work, { recursive: true });
    const envOf = { claude: claudeEnv, codex: codexEnv, gemini: geminiEnv }[cli]!;
    const base = envOf(h.home, fake.url);
    const env = { ...h.env, ...base, PATH: `${path.join(DIR!, release, "node_modules", ".bin")}:${process.env.PATH}` };
    fs.writeFileSync(path.join(h.home, "settings.yaml"), `gateway: on\nprofiles:\n  free:\n    model: ${MODELS[cli].model}\n    permission_mode: ${MODELS[cli].mode}\n`);
    const from = fake.reported.length;
    const seen = fake.requests.length;
    const run = await liData(["agent", "--detach", "--cwd", work, "--profile", "free", "say", "hello"], { env });
    const job = await terminal(env, run.id, 120_000);
    const reported = fake.reported.slice(from);
    const posts = fake.requests.slice(seen).filter((r) => r.method === "POST").length;
    // What a failed release said, for the table (its console's last lines).
    const said = job.status === "completed" ? "" : fs.readFileSync(job.console_log, "utf8").trim().split("\n").slice(-3).join(" | ").slice(-300);
    console.log(`${release}\t${job.status}\t${job.reason_code ?? ""}\tusage_source=${job.usage_source}\tgateway_calls=${job.gateway_calls}\tfake_posts=${posts}\t${said}`);
    expect(reported.length).toBeGreaterThan(0);
    expect(job).toMatchObject({ status: "completed", usage_source: "gateway", usage: recorded(reported) });
  }, 150_000);
});
