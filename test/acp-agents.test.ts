/**
 * Issue 50: ACP agents are declared in settings only (acp_agents.NAME) and run as acp/NAME or
 * acp/NAME/MODEL. Bad input is refused before any record: an entry without a command, a name
 * with a slash, an unknown acp/NAME, an agent from a project file li does not trust, and an
 * asking run on an entry that does not say how its agent is made to ask.
 */
import fs from "node:fs";
import path from "node:path";
import { li } from "./helpers/li.js";
import { rows, useHomes } from "./helpers/fixtures.js";
import { oneStore } from "./helpers/stores.js";

const home = useHomes();

const refused = async (h: { env: NodeJS.ProcessEnv }, args: string[], cwd?: string) => {
  const r = await li(["--machine", "agent", "--detach", ...args], { env: h.env, ...(cwd ? { cwd } : {}) });
  expect(r.json.ok).toBe(false);
  return r.json.error;
};

oneStore("an entry without a command, or a name with a slash, is refused naming the setting; nothing is recorded", async () => {
  const h = home();
  const file = path.join(h.home, "settings.yaml");
  fs.writeFileSync(file, "acp_agents:\n  bare: {args: [--acp]}\n");
  const e1 = await refused(h, ["acp/bare", "hi"]);
  expect([e1.kind, e1.message]).toEqual(["invalid_input", expect.stringContaining("acp_agents.bare.command")]);
  fs.writeFileSync(file, 'acp_agents:\n  "a/b": {command: x}\n');
  const e2 = await refused(h, ["acp/a", "hi"]);
  expect(e2.message).toContain("acp_agents.a/b");
  expect(e2.message).toMatch(/no \//);
  fs.writeFileSync(file, "acp_agents:\n  x: {command: x, ask: {}}\n");
  expect((await refused(h, ["acp/x", "hi"])).message).toContain("acp_agents.x.ask");
  expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
});

oneStore("an unknown acp/NAME is refused naming the declared ones; one from an untrusted project file names the file and li hooks trust", async () => {
  const h = home();
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "acp_agents:\n  mine: {command: /bin/true, ask: {mode: default}}\n");
  const e1 = await refused(h, ["acp/nope", "hi"]);
  expect([e1.kind, e1.detail.code, e1.detail.known]).toEqual(["invalid_input", "acp_agent_unknown", ["mine"]]);
  const project = path.join(h.home, "proj");
  fs.mkdirSync(path.join(project, ".li"), { recursive: true });
  fs.writeFileSync(path.join(project, ".li", "settings.yaml"), "acp_agents:\n  theirs: {command: /bin/true, ask: {mode: default}}\n");
  const e2 = await refused(h, ["acp/theirs", "hi"], project);
  expect([e2.detail.code, e2.message]).toEqual(["acp_agent_untrusted", expect.stringContaining("li hooks trust")]);
  // An entry without ask: an asking run is refused, naming the setting; a run that does not ask is not.
  fs.writeFileSync(path.join(h.home, "settings.yaml"), "acp_agents:\n  mine: {command: /bin/true}\n");
  const e3 = await refused(h, ["--approvals", "ask", "acp/mine/some-model", "hi"]);
  expect([e3.detail.code, e3.message]).toEqual(["approvals_unsupported", expect.stringContaining("acp_agents.mine")]);
  expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
});
