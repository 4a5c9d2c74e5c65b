/**
 * li's prompt server (issue 39: claude's --permission-prompt-tool) without claude: the bundled
 * dist/bundle/prompt-server.cjs spoken to as claude speaks to it (stdio JSON-RPC), with a stand-in
 * for the worker's ask channel. Each call is forwarded as asked and answered with the worker's
 * answer as the tool's text; with no channel, or one that fails, the answer is a denial.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { ignoreEpipe, ROOT } from "./helpers/li.js";

const SERVER = path.join(ROOT, "dist", "bundle", "prompt-server.cjs");
let dir: string;
const kids: ChildProcessWithoutNullStreams[] = [];
beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-prompt-server-"))));
afterAll(() => {
  for (const k of kids) k.kill("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The server started with `env`; `call` sends one request and resolves with its response. */
function server(env: Record<string, string>) {
  const child = spawn(process.execPath, [SERVER], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["pipe", "pipe", "pipe"] });
  kids.push(child);
  const waiting = new Map<number, { resolve: (m: any) => void; reject: (e: Error) => void }>();
  readline.createInterface({ input: child.stdout }).on("line", (l) => {
    const m = JSON.parse(l);
    waiting.get(m.id)?.resolve(m);
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  // A server that exits (a missing bundle, a crash) fails its calls at once rather than at the test's timeout.
  child.on("exit", (code) => waiting.forEach((w) => w.reject(new Error(`the prompt server exited (${code}): ${stderr.slice(-500)}`))));
  // That exit is what a write after it reports too: its EPIPE is not left uncaught.
  ignoreEpipe(child.stdin);
  let n = 0;
  const call = (method: string, params: unknown = {}) =>
    new Promise<any>((resolve, reject) => {
      const id = ++n;
      waiting.set(id, { resolve, reject });
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  return { child, call };
}

const ASK = { tool_name: "Bash", input: { command: "rm -rf build" }, tool_use_id: "toolu_1" };
const answerText = (r: any) => JSON.parse(r.result.content[0].text);

test("it offers one tool, approve; a call is forwarded to the worker's channel as asked, and the worker's answer is the tool's text", async () => {
  const sock = path.join(dir, "ask.sock");
  const asked: unknown[] = [];
  const channel = net.createServer((c) => {
    let buf = "";
    // A server that drops the connection first fails the call's answer, not the test through an uncaught error.
    c.on("error", () => {});
    c.on("data", (d) => {
      buf += d;
      if (!buf.includes("\n")) return;
      const req = JSON.parse(buf);
      asked.push(req);
      c.end(JSON.stringify(req.input.command.startsWith("rm") ? { behavior: "deny", message: "use the test script" } : { behavior: "allow", updatedInput: req.input }) + "\n");
    });
  });
  await new Promise<void>((r) => channel.listen(sock, r));
  try {
    const s = server({ LI_APPROVAL_SOCKET: sock });
    const init = await s.call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude", version: "x" } });
    expect(init.result).toMatchObject({ protocolVersion: "2025-06-18", capabilities: { tools: {} } });
    s.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    expect((await s.call("tools/list")).result.tools.map((t: any) => t.name)).toEqual(["approve"]);
    expect(answerText(await s.call("tools/call", { name: "approve", arguments: ASK }))).toEqual({ behavior: "deny", message: "use the test script" });
    const npm = { ...ASK, input: { command: "npm test" }, tool_use_id: "toolu_2" };
    expect(answerText(await s.call("tools/call", { name: "approve", arguments: npm }))).toEqual({ behavior: "allow", updatedInput: { command: "npm test" } });
    expect(asked).toEqual([ASK, npm]);
    expect((await s.call("tools/call", { name: "other", arguments: ASK })).error).toMatchObject({ code: -32602 });
    expect((await s.call("resources/list")).error).toMatchObject({ code: -32601 });
  } finally {
    channel.close();
  }
});

test("with no channel, or a channel that is gone, every call is denied, saying why", async () => {
  const none = server({});
  expect(answerText(await none.call("tools/call", { name: "approve", arguments: ASK }))).toEqual({ behavior: "deny", message: expect.stringMatching(/no approval channel/) });
  const gone = server({ LI_APPROVAL_SOCKET: path.join(dir, "nobody.sock") });
  expect(answerText(await gone.call("tools/call", { name: "approve", arguments: ASK }))).toEqual({ behavior: "deny", message: expect.stringMatching(/approval channel failed/) });
});
