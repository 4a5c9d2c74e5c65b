/*
 * The codex route for runs that ask (issue 50): `codex app-server` over stdio, driven by this
 * process, which the worker starts as the run's provider. JSON-RPC lines: initialize, then
 * thread/start (cwd, model, approvalPolicy "untrusted", sandbox) or thread/resume, then
 * turn/start with the prompt. item/commandExecution/requestApproval and
 * item/fileChange/requestApproval become li requests over LI_APPROVAL_SOCKET: an allow is answered
 * `accept`, a denial `decline` (never acceptForSession: li keeps "don't ask again" itself), and a
 * denial's message follows as a turn/steer, which reaches the model as its next input.
 *
 * It writes li's ACP JSONL (providers/acp/events.ts) for the worker, read by streams/acp.ts:
 * usage is the sum of thread/tokenUsage/updated's `last` (each model call of this run).
 * Ends as the ACP client does: the turn's end; the agent exiting mid-turn (with its stderr tail);
 * a line that is not JSON or over MAX_LINE_BYTES; the worker gone; SIGTERM (turn/interrupt, then
 * the agent is killed after a grace).
 */
import fs from "node:fs";
import { askApproval } from "../../approvals/ask-client.js";
import { APPROVAL_SOCKET_ENV, type AskAnswer } from "../../approvals/protocol.js";
import type { AcpEvent } from "../acp/events.js";
import { startAgent } from "../agent-child.js";
import { CODEX_CLIENT_ENV, parseCodexConfig, type CodexClientConfig } from "./config.js";
import { untrustedProjects } from "./project-trust.js";
import { requestOf } from "./requests.js";

const MAX_LINE_BYTES = 16 * 1024 * 1024;
const GRACE_MS = 2000;

const emit = (e: AcpEvent) => fs.writeSync(1, JSON.stringify(e) + "\n");

let cfg: CodexClientConfig;
try {
  cfg = parseCodexConfig(process.env[CODEX_CLIENT_ENV]);
} catch (err: any) {
  emit({ type: "error", message: `li's codex client: ${err?.message ?? err}` });
  process.exit(2);
}
const prompt = fs.readFileSync(0, "utf8");
const socket = process.env[APPROVAL_SOCKET_ENV];
const parent = process.ppid;

const agent = startAgent(cfg.argv, { ...process.env, [CODEX_CLIENT_ENV]: "" }, "codex app-server");
const { child } = agent;
const childGone = agent.gone;
child.stdin!.on("error", () => {});

let finished = false;
async function finish(code: number, error?: string): Promise<never> {
  if (!finished) {
    finished = true;
    if (error) emit({ type: "error", message: error });
    child.stdin?.end();
    const t = setTimeout(() => child.kill("SIGKILL"), GRACE_MS);
    if (!agent.exited()) child.kill("SIGTERM");
    await childGone;
    clearTimeout(t);
    process.exit(code);
  }
  return new Promise<never>(() => {});
}
const failure = agent.failure;

setInterval(() => {
  if (process.ppid !== parent) void finish(1, "li's worker is gone; codex is stopped");
}, 500).unref();

// JSON-RPC over lines, both ways: codex app-server is not ACP, and speaks plain JSON-RPC 2.0 lines.
let nextId = 1;
const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
const send = (m: Record<string, unknown>) => child.stdin!.write(JSON.stringify(m) + "\n");
const request = (method: string, params: unknown) =>
  new Promise<any>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });

let threadId: string | null = null;
let turnId: string | null = null;
let text = "";
const usage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0 };
let sawUsage = false;
let turnDone: (turn: any) => void = () => {};
const turnEnded = new Promise<any>((r) => (turnDone = r));

async function onServerRequest(id: unknown, method: string, params: any): Promise<void> {
  const req = requestOf(method, params);
  if (!req) return void send({ id, error: { code: -32601, message: `li does not answer ${method}` } });
  let answer: AskAnswer;
  if (!socket) answer = { behavior: "deny", message: `nobody to ask (no ${APPROVAL_SOCKET_ENV})` };
  else
    try {
      answer = await askApproval(socket, req);
    } catch (err: any) {
      answer = { behavior: "deny", message: `the approval channel failed: ${err?.message ?? err}` };
      setTimeout(() => void finish(1, `li's approval channel closed while codex waited for an answer (${err?.message ?? err})`), 0);
    }
  send({ id, result: { decision: answer.behavior === "allow" ? "accept" : "decline" } });
  // The decision has no message field: a steer carries it to the model as its next input.
  if (answer.behavior === "deny" && answer.message && threadId && turnId)
    request("turn/steer", { threadId, expectedTurnId: turnId, input: [{ type: "text", text: `The user denied that request: ${answer.message}`, text_elements: [] }] }).catch(() => {});
}

function onNotification(method: string, params: any): void {
  if (method === "item/agentMessage/delta" && typeof params?.delta === "string") {
    text += params.delta;
    emit({ type: "text", text: params.delta });
  } else if (method === "item/started" && params?.item?.type === "commandExecution") {
    emit({ type: "tool", id: String(params.item.id ?? ""), title: String(params.item.command ?? ""), kind: "execute", status: "pending" });
  } else if (method === "thread/tokenUsage/updated") {
    const last = params?.tokenUsage?.last;
    if (last) {
      sawUsage = true;
      usage.input_tokens += Number(last.inputTokens) || 0;
      usage.output_tokens += Number(last.outputTokens) || 0;
      usage.cached_tokens += Number(last.cachedInputTokens) || 0;
    }
  } else if (method === "turn/completed") turnDone(params?.turn);
}

let buf = Buffer.alloc(0);
child.stdout!.on("data", (chunk: Buffer) => {
  buf = Buffer.concat([buf, chunk]);
  for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
    const line = buf.subarray(0, nl).toString("utf8").trim();
    buf = buf.subarray(nl + 1);
    if (!line) continue;
    let m: any;
    try {
      m = JSON.parse(line);
    } catch {
      return void finish(1, failure(`codex app-server sent a line that is not JSON: ${line.slice(0, 200)}`));
    }
    if (m.id !== undefined && m.method) void onServerRequest(m.id, m.method, m.params);
    else if (m.id !== undefined) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(new Error(`${m.error.message ?? "error"} (${m.error.code})`));
      else p?.resolve(m.result);
    } else if (m.method) onNotification(m.method, m.params);
  }
  if (buf.length > MAX_LINE_BYTES) void finish(1, failure(`codex app-server sent a message over ${MAX_LINE_BYTES} bytes`));
});
child.stdout!.on("close", () => {
  void Promise.race([childGone, new Promise((r) => setTimeout(r, 500))]).then(() => finish(1, failure("codex app-server closed its output before the turn ended")));
});

process.on("SIGTERM", () => {
  if (threadId && turnId) request("turn/interrupt", { threadId, turnId }).catch(() => {});
  setTimeout(() => void finish(1, "stopped by li (SIGTERM)"), GRACE_MS).unref();
});

async function main(): Promise<void> {
  await request("initialize", { clientInfo: { name: "li", title: null, version: "1" }, capabilities: null });
  send({ method: "initialized" });
  const thread = { cwd: process.cwd(), model: cfg.model, approvalPolicy: "untrusted", sandbox: cfg.sandbox, config: { ...cfg.config, ...untrustedProjects(process.cwd()) } };
  const started = cfg.resume ? await request("thread/resume", { threadId: cfg.resume, ...thread, excludeTurns: true }) : await request("thread/start", thread);
  threadId = String(started?.thread?.id ?? cfg.resume ?? "");
  emit({ type: "session", id: threadId });
  const turn = await request("turn/start", { threadId, input: [{ type: "text", text: prompt, text_elements: [] }] });
  turnId = String(turn?.turn?.id ?? "");
  const ended = await turnEnded;
  if (ended?.status === "failed") return finish(1, failure(`codex: ${ended?.error?.message ?? "the turn failed"}`));
  emit({ type: "result", text, stop_reason: String(ended?.status ?? "completed"), usage: sawUsage ? usage : null });
  return finish(ended?.status === "interrupted" ? 1 : 0, ended?.status === "interrupted" ? "the turn was interrupted" : undefined);
}

main().catch((err: any) => finish(1, failure(`codex app-server: ${err?.message ?? err}`)));
