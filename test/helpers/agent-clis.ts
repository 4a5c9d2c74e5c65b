/**
 * The real claude, codex and gemini CLIs (installed by `npm run agent-clis`, pinned in
 * scripts/agent-clis.json) and how a suite points one at its loopback fake API: a private home,
 * config folder and API key per test home, a proxy that refuses everything not on loopback (so
 * any call to the internet fails at once instead of hanging), and telemetry and update checks off.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./li.js";

const PINS_TEXT = fs.readFileSync(path.join(ROOT, "scripts", "agent-clis.json"), "utf8");
export const PINS: Record<string, string> = JSON.parse(PINS_TEXT);

/** Where install-agent-clis.mjs puts them (the same rule: LI_AGENT_CLIS, else a folder per set of pins). */
export const CLI_DIR = process.env.LI_AGENT_CLIS || path.join(os.homedir(), ".cache", "li-agent-clis", createHash("sha256").update(PINS_TEXT).digest("hex").slice(0, 12));
export const CLI_BIN = path.join(CLI_DIR, "node_modules", ".bin");

/** The pinned CLIs that are not installed in CLI_DIR at their pinned version ("name@version (found …)"). */
export function missingClis(): string[] {
  return Object.entries(PINS).flatMap(([name, version]) => {
    let found: string | undefined;
    try {
      found = JSON.parse(fs.readFileSync(path.join(CLI_DIR, "node_modules", name, "package.json"), "utf8")).version;
    } catch {
      found = undefined;
    }
    return found === version ? [] : [`${name}@${version} (${found ? `found ${found}` : "not installed"})`];
  });
}

/** True when the pinned versions are installed (install-agent-clis.mjs stamps the folder once they all start). */
export function agentClisInstalled(): boolean {
  let stamp: unknown;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(CLI_DIR, "installed.json"), "utf8"));
  } catch {
    stamp = null;
  }
  return JSON.stringify(stamp) === JSON.stringify(PINS);
}

/** What is missing, where it was looked for, and how to get it. */
export function agentClisHint(): string {
  const missing = missingClis();
  const what = missing.length ? `missing ${missing.join(", ")}` : `no installed.json stamp matching scripts/agent-clis.json (an install that did not finish)`;
  return `The real agent CLIs are not in ${CLI_DIR}: ${what}. Run \`npm run agent-clis\` (about 1.4 GB) with the same HOME and LI_AGENT_CLIS as the tests; it installs into LI_AGENT_CLIS, else ~/.cache/li-agent-clis/<digest of the pins>.`;
}

/**
 * describe when the CLIs are installed. Without them: describe.skip with a warning, unless
 * LI_TEST_REQUIRE_AGENT_CLIS is set (as .ci/run sets it), where their absence is one failing test
 * naming the folder looked in; CI installs them first, so a skip there would only hide a
 * mismatch between where they were put and where the tests look.
 */
export function describeReal(name: string, fn: () => void): void {
  if (agentClisInstalled()) return describe(name, fn);
  if (process.env.LI_TEST_REQUIRE_AGENT_CLIS) {
    describe(name, () => test("the real agent CLIs are installed (LI_TEST_REQUIRE_AGENT_CLIS is set)", () => {
      throw new Error(agentClisHint());
    }));
    return;
  }
  console.warn(`skipping "${name}": ${agentClisHint()}`);
  describe.skip(name, fn);
}

/** The environment every real CLI runs with under `home`: its own HOME, the CLIs first on PATH, no way off loopback. */
export function baseEnv(home: string): Record<string, string> {
  const h = path.join(home, "agent-home");
  fs.mkdirSync(h, { recursive: true });
  return {
    HOME: h,
    PATH: `${CLI_BIN}:${process.env.PATH}`,
    // Port 9 (discard) refuses connections: anything not on loopback fails fast.
    HTTPS_PROXY: "http://127.0.0.1:9",
    HTTP_PROXY: "http://127.0.0.1:9",
    https_proxy: "http://127.0.0.1:9",
    http_proxy: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DO_NOT_TRACK: "1",
  };
}

/** claude against an Anthropic Messages fake at `url`. */
export function claudeEnv(home: string, url: string): Record<string, string> {
  const env = baseEnv(home);
  const config = path.join(env.HOME, ".claude");
  fs.mkdirSync(config, { recursive: true });
  return {
    ...env,
    CLAUDE_CONFIG_DIR: config,
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "sk-ant-test",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // One attempt: a 500 then fails at once instead of after claude's backoff.
    CLAUDE_CODE_MAX_RETRIES: "0",
  };
}

/** The config.toml that sends codex to a Responses fake at `url`, with no retries. */
export function codexProviderToml(url: string): string {
  return [
    'model_provider = "fake"',
    "check_for_update_on_startup = false",
    "[analytics]",
    "enabled = false",
    "[model_providers.fake]",
    'name = "fake"',
    `base_url = "${url}/v1"`,
    'wire_api = "responses"',
    'env_key = "OPENAI_API_KEY"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "supports_websockets = false",
    "",
  ].join("\n");
}

/** codex against a Responses fake at `url`; `extraToml` is appended to its config.toml. */
export function codexEnv(home: string, url: string, extraToml = ""): Record<string, string> {
  const env = baseEnv(home);
  // Not under /tmp's top level only by accident: codex warns that it will not put helper binaries in a temp dir, and goes on.
  const codexHome = path.join(env.HOME, ".codex");
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(path.join(codexHome, "config.toml"), codexProviderToml(url) + extraToml);
  return { ...env, CODEX_HOME: codexHome, OPENAI_API_KEY: "sk-test" };
}

/** gemini against a Gemini API fake at `url`: API-key auth, one attempt per request, no telemetry. */
export function geminiEnv(home: string, url: string, settings: Record<string, unknown> = {}): Record<string, string> {
  const env = baseEnv(home);
  const dir = path.join(env.HOME, ".gemini");
  fs.mkdirSync(dir, { recursive: true });
  const base = { security: { auth: { selectedType: "gemini-api-key" } }, general: { maxAttempts: 1, enableAutoUpdate: false, enableAutoUpdateNotification: false }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } };
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ ...base, ...settings }, null, 2));
  return { ...env, GEMINI_CLI_HOME: env.HOME, GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "test-key" };
}

/** Live (non-zombie) processes whose environment names this LI_HOME: the run's worker and every CLI process under it. */
export function processesOf(liHome: string): number[] {
  const mark = Buffer.from(`LI_HOME=${liHome}\0`);
  const out: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${name}/stat`, "utf8"))) continue;
      if (fs.readFileSync(`/proc/${name}/environ`).includes(mark)) out.push(Number(name));
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

/**
 * li's settings declaring the real Qwen Code as `acp/qwen`, against the loopback chat-completions
 * fake at `url`: how an asking run makes it ask, plus `more` lines of the entry (`base_url_env`, …).
 */
export function qwenSettings(url: string, more: string[] = [], opts: QwenOpts = {}): string {
  return ["acp_agents:", ...qwenEntry("qwen", url, more, opts), ""].join("\n");
}

/** `args` in place of the asking ones (then no ask), another API key, more of ask's own map (`, env: {…}`). */
type QwenOpts = { args?: string; key?: string; askMore?: string };

/** The lines of one `acp_agents` entry, `name`, declaring the real Qwen Code as qwenSettings does. */
export function qwenEntry(name: string, url: string, more: string[] = [], opts: QwenOpts = {}): string[] {
  return [
    `  ${name}:`,
    `    command: ${path.join(CLI_BIN, "qwen")}`,
    `    args: ${opts.args ?? '["--acp", "--auth-type=openai"]'}`,
    `    env: {OPENAI_BASE_URL: "${url}/v1", OPENAI_API_KEY: ${opts.key ?? "sk-test"}, OPENAI_MODEL: "{model}"}`,
    ...(opts.args ? [] : [`    ask: {args: ["--approval-mode", "default"]${opts.askMore ?? ""}}`]),
    ...more,
  ];
}

/**
 * An `acp_agents` entry (an object: JSON is YAML) declaring the real opencode against the loopback
 * chat-completions fake at `url`, configured wholly by its variables (OPENCODE_CONFIG_CONTENT
 * declares the provider); an asking run adds OPENCODE_PERMISSION bash ask and `askEnv`.
 */
export function opencodeEntry(url: string, askEnv: Record<string, string>) {
  const config = {
    provider: { fake: { npm: "@ai-sdk/openai-compatible", name: "fake", options: { baseURL: `${url}/v1`, apiKey: "sk-test" }, models: { "fake-model": { name: "fake-model", tool_call: true } } } },
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
  };
  const env = { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_DEFAULT_PLUGINS: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" };
  return { command: path.join(CLI_BIN, "opencode"), args: ["acp"], env, ask: { env: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }), ...askEnv } } };
}
