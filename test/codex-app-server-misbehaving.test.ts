/**
 * Issue 50, the codex route's three questions with a stand-in `codex` first on PATH whose
 * app-server misbehaves mid-turn: a crash ends the run failed with its stderr tail; a line that
 * is not JSON ends it failed saying so. Neither leaves the worker hanging or a process behind.
 */
import path from "node:path";
import { output, untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData, until, ROOT } from "./helpers/li.js";
import { processesOf } from "./helpers/agent-clis.js";
import { oneStore } from "./helpers/stores.js";

const home = useHomes({ stopRuns: true });
const BIN = path.join(ROOT, "test", "fixtures", "codex-app-server");

async function runMode(mode: string) {
  const h = home();
  const env = { ...h.env, PATH: `${BIN}:${process.env.PATH}`, LI_TEST_CODEX_MODE: mode };
  const run = await liData(["agent", "--detach", "--approvals", "ask", "codex/gpt-5", "hi"], { env });
  const end = await untilStatus(env, run.id, (j) => j.terminal, 60_000);
  const text = (await output(env, run.id)).output as string;
  await until(() => processesOf(h.home).length === 0, 30_000);
  return { end, text };
}

oneStore("codex app-server crashing mid-turn: the run ends failed, with its exit and its stderr tail", async () => {
  const { end, text } = await runMode("crash");
  expect(end.status).toBe("failed");
  expect(text).toMatch(/li: codex app-server closed its output before the turn ended \(codex app-server exited 3\); its stderr ends: boom: codex fell over/);
}, 90_000);

oneStore("codex app-server sending a line that is not JSON: the run ends failed saying so", async () => {
  const { end, text } = await runMode("garbage");
  expect(end.status).toBe("failed");
  expect(text).toContain("li: codex app-server sent a line that is not JSON: this is not json");
}, 90_000);
