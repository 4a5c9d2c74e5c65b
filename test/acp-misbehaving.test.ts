/**
 * Issue 50, the ACP route's three questions with an agent that misbehaves mid-turn (a fixture
 * declared in settings): a crash ends the run failed with its stderr tail; a line that is not
 * JSON, or a message over li's bound, ends it failed naming that. None leaves the worker hanging
 * or an agent process behind.
 */
import fs from "node:fs";
import path from "node:path";
import { output, untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData, until, ROOT } from "./helpers/li.js";
import { processesOf } from "./helpers/agent-clis.js";
import { oneStore } from "./helpers/stores.js";

const home = useHomes({ stopRuns: true });
const AGENT = path.join(ROOT, "test", "fixtures", "acp", "misbehaving-agent.mjs");

async function runMode(mode: string) {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `acp_agents:\n  bad: {command: ${process.execPath}, args: [${JSON.stringify(AGENT)}, ${mode}], ask: {mode: default}}\n`);
  const run = await liData(["agent", "--detach", "--approvals", "ask", "acp/bad", "hi"], { env: h.env });
  const end = await untilStatus(h.env, run.id, (j) => j.terminal, 60_000);
  const text = (await output(h.env, run.id)).output as string;
  await until(() => processesOf(h.home).length === 0, 30_000);
  return { end, text };
}

oneStore("an agent that crashes mid-turn: the run ends failed, with the agent's exit and its stderr tail", async () => {
  const { end, text } = await runMode("crash");
  expect(end.status).toBe("failed");
  expect(text).toMatch(/li: the agent closed the connection before its turn ended \(the agent exited 3\); its stderr ends: boom: the agent fell over/);
}, 90_000);

oneStore("an agent that sends a line that is not JSON: the run ends failed saying so", async () => {
  const { end, text } = await runMode("garbage");
  expect(end.status).toBe("failed");
  expect(text).toContain("li: the agent sent a line that is not JSON");
}, 90_000);

oneStore("an agent that sends a message over li's bound: the run ends failed naming the bound", async () => {
  const { end, text } = await runMode("huge");
  expect(end.status).toBe("failed");
  expect(text).toMatch(/li: .*(over 16777216 bytes|too large|exceeds)/i);
}, 90_000);
