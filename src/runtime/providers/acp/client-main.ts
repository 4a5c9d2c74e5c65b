/*
 * li's one ACP client (issue 50): the process a run of gemini (asking) or of any agent declared
 * in `acp_agents` starts as its provider. It starts the agent, speaks the Agent Client Protocol to
 * it with @agentclientprotocol/sdk (initialize, session/new or session/load, session/prompt), asks
 * the worker about each session/request_permission through LI_APPROVAL_SOCKET (the route claude's
 * prompt server takes), and writes li's own JSONL (events.ts) on stdout for the worker.
 *
 * How it ends, always with a cause on the record: the turn's stop (exit 0); the agent exiting or
 * the connection failing mid-turn (an error naming the agent's exit and its stderr tail, exit 1);
 * a line that is not JSON or a message over MAX_MESSAGE_BYTES (an error saying so, exit 1); the
 * worker gone (its pid no longer our parent: the agent is killed, exit 1); SIGTERM (session/cancel,
 * then the agent is killed after a grace).
 */
import fs from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { askApproval } from "../../approvals/ask-client.js";
import { APPROVAL_SOCKET_ENV, type AskAnswer } from "../../approvals/protocol.js";
import { startAgent } from "../agent-child.js";
import { ACP_CLIENT_ENV, parseClientConfig, type AcpClientConfig } from "./config.js";
import type { AcpEvent } from "./events.js";
import { askRequestOf, outcomeOf } from "./permission.js";

/** The largest message li takes from an agent: a tool's whole output fits; a runaway line does not. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** After session/cancel (or the turn's end), how long the agent has to exit before SIGKILL. */
const GRACE_MS = 2000;
/**
 * After session/load, the replay of the earlier turns counts as over once no session/update came
 * for REPLAY_QUIET_MS (at most REPLAY_MAX_MS in all). ACP says an agent replays the history before
 * it answers session/load, but gemini 0.61.0 answers first and streams the history after
 * (GeminiAgent.loadSession calls session.streamHistory without awaiting it): without this wait the
 * earlier turns' text would be the resumed run's console and result.
 */
const REPLAY_QUIET_MS = 300;
const REPLAY_MAX_MS = 30_000;

const emit = (e: AcpEvent) => fs.writeSync(1, JSON.stringify(e) + "\n");

let cfg: AcpClientConfig;
try {
  cfg = parseClientConfig(process.env[ACP_CLIENT_ENV]);
} catch (err: any) {
  emit({ type: "error", message: `li's ACP client: ${err?.message ?? err}` });
  process.exit(2);
}
const prompt = fs.readFileSync(0, "utf8");
const socket = process.env[APPROVAL_SOCKET_ENV];
const parent = process.ppid;

const proc = startAgent(cfg.argv, { ...process.env, [ACP_CLIENT_ENV]: "", ...cfg.env }, "the agent");
const { child } = proc;
const childGone = proc.gone;

let finished = false;
/** Ends this process with `code` once the agent is gone (SIGKILL after GRACE_MS). */
async function finish(code: number, error?: string): Promise<never> {
  if (!finished) {
    finished = true;
    if (error) emit({ type: "error", message: error });
    // The end of its input lets an agent finish as it would (saving its session); a grace, then
    // SIGTERM, then SIGKILL for one that does not.
    child.stdin?.end();
    const term = setTimeout(() => child.kill("SIGTERM"), code === 0 ? GRACE_MS : 0);
    const kill = setTimeout(() => child.kill("SIGKILL"), (code === 0 ? GRACE_MS : 0) + GRACE_MS);
    await childGone;
    clearTimeout(term);
    clearTimeout(kill);
    process.exit(code);
  }
  return new Promise<never>(() => {});
}

/** The failure of a turn that did not stop: what the agent did, and the tail of what it said. */
const failure = proc.failure;

// The worker gone (kill -9): nobody can answer or record anything; the agent goes with it.
setInterval(() => {
  if (process.ppid !== parent) void finish(1, "li's worker is gone; the agent is stopped");
}, 500).unref();

let sessionId: string | null = null;
let cancelling = false;
process.on("SIGTERM", () => {
  if (cancelling) return;
  cancelling = true;
  if (sessionId) void conn?.agent.notify("session/cancel", { sessionId }).catch(() => {});
  setTimeout(() => void finish(1, "stopped by li (SIGTERM)"), GRACE_MS).unref();
});

// Bytes the SDK sends the agent pass through here: a parse-error reply means the agent sent a line
// that is not JSON, which ends the run (the SDK would only answer it and wait on).
const toAgent = Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>;
const writer = toAgent.getWriter();
const output = new WritableStream<Uint8Array>({
  write(chunk) {
    if (/"code":-32700\b/.test(Buffer.from(chunk).toString("utf8"))) void finish(1, failure("the agent sent a line that is not JSON"));
    return writer.write(chunk);
  },
});
const input = Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>;
const stream = acp.ndJsonStream(output, input, { maxMessageBytes: MAX_MESSAGE_BYTES });

let replaying = false;
let lastUpdate = 0;
let text = "";
const app = acp
  .client({ name: "li" })
  .onRequest("session/request_permission", async ({ params }) => {
    const req = askRequestOf(params.toolCall as any, cfg.shell_tool);
    let answer: AskAnswer;
    if (!socket) answer = { behavior: "deny", message: `nobody to ask (no ${APPROVAL_SOCKET_ENV})` };
    else
      try {
        answer = await askApproval(socket, req);
      } catch (err: any) {
        // The worker's channel closed (its run ended, or the worker died): deny, and the turn ends.
        answer = { behavior: "deny", message: `the approval channel failed: ${err?.message ?? err}` };
        setTimeout(() => void finish(1, `li's approval channel closed while the agent waited for an answer (${err?.message ?? err})`), 0);
      }
    return { outcome: outcomeOf(answer, params.options) };
  })
  .onNotification("session/update", ({ params }) => {
    lastUpdate = Date.now();
    if (replaying) return;
    const u: any = params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") {
      text += u.content.text;
      emit({ type: "text", text: u.content.text });
    } else if (u.sessionUpdate === "tool_call" || (u.sessionUpdate === "tool_call_update" && u.status)) {
      emit({ type: "tool", id: String(u.toolCallId ?? ""), title: String(u.title ?? ""), kind: String(u.kind ?? ""), status: String(u.status ?? "") });
    }
  });

let conn: acp.ClientConnection | undefined;

/** The usage a prompt response reports: ACP's `usage`, or gemini's `_meta.quota.token_count`. */
function usageOf(r: any): { input_tokens: number; output_tokens: number; cached_tokens: number } | null {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  if (r?.usage && typeof r.usage === "object") return { input_tokens: n(r.usage.inputTokens), output_tokens: n(r.usage.outputTokens), cached_tokens: n(r.usage.cachedReadTokens) };
  const t = r?._meta?.quota?.token_count;
  if (t && typeof t === "object") return { input_tokens: n(t.input_tokens), output_tokens: n(t.output_tokens), cached_tokens: n(t.cached_tokens) };
  return null;
}

/** Resolves once session/update has been quiet for REPLAY_QUIET_MS (see there), or after REPLAY_MAX_MS. */
async function replayOver(): Promise<void> {
  const start = (lastUpdate = Date.now());
  while (Date.now() - lastUpdate < REPLAY_QUIET_MS && Date.now() - start < REPLAY_MAX_MS) await new Promise((r) => setTimeout(r, 50));
}

const tooLarge = (c: any) => c instanceof acp.MessageTooLargeError || c?.name === "MessageTooLargeError";

async function main(): Promise<void> {
  conn = app.connect(stream);
  const agent = conn.agent;
  // The connection closing before the turn stopped (the agent exited, an oversized message).
  const closed = conn.closed.then(async () => {
    await Promise.race([childGone, new Promise((r) => setTimeout(r, 200))]);
    return finish(1, failure(tooLarge(conn!.signal.reason) ? `the agent sent a message over ${MAX_MESSAGE_BYTES} bytes` : "the agent closed the connection before its turn ended"));
  });
  const turn = async () => {
    const init: any = await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "li", version: "1" } } as any);
    const cwd = process.cwd();
    const mcpServers = cfg.mcp_servers ?? [];
    let configOptions: any[] = [];
    if (cfg.resume) {
      const caps = init?.agentCapabilities ?? {};
      replaying = true;
      if (caps.sessionCapabilities?.resume) configOptions = (await agent.request("session/resume", { sessionId: cfg.resume, cwd, mcpServers } as any) as any)?.configOptions ?? [];
      else if (caps.loadSession) {
        // At most a minute, for gemini's clash of file names (loadNotBefore in gemini.ts).
        if (cfg.load_not_before && cfg.load_not_before > Date.now()) {
          fs.writeSync(2, `li: loading the session at ${new Date(cfg.load_not_before).toISOString()}, the minute after the run it continues ended (gemini's saved session would be overwritten before)\n`);
          await new Promise((r) => setTimeout(r, Math.min(cfg.load_not_before! - Date.now(), 60_000)));
        }
        configOptions = ((await agent.request("session/load", { sessionId: cfg.resume, cwd, mcpServers } as any)) as any)?.configOptions ?? [];
        await replayOver();
      } else throw new Error("the agent can neither resume nor load a session (its initialize offers neither)");
      replaying = false;
      sessionId = cfg.resume;
    } else {
      const s: any = await agent.request("session/new", { cwd, mcpServers } as any);
      sessionId = s.sessionId as string;
      configOptions = s.configOptions ?? [];
    }
    emit({ type: "session", id: sessionId });
    if (cfg.mode) await agent.request("session/set_mode", { sessionId, modeId: cfg.mode } as any);
    if (cfg.model) {
      const opt = configOptions.find((o) => o?.category === "model" || o?.id === "model");
      if (!opt) throw new Error(`the agent offers no model option to choose ${cfg.model} with; run acp/NAME for its default, or pass the model in the entry's args or env ({model})`);
      await agent.request("session/set_config_option", { sessionId, configId: opt.id, value: cfg.model } as any);
    }
    const r: any = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: prompt }] } as any);
    const stop = String(r?.stopReason ?? "end_turn");
    emit({ type: "result", text, stop_reason: stop, usage: usageOf(r) });
    return finish(stop === "cancelled" ? 1 : 0, stop === "cancelled" ? "the turn was cancelled" : undefined);
  };
  await Promise.race([
    turn().catch(async (err: any) => {
      // The SDK rejects the pending request with "connection closed"; the cause is the connection's.
      const large = [err, err?.cause, conn?.signal.aborted ? conn.signal.reason : null].some(tooLarge);
      // A closed connection is most often the agent exiting: its exit status says more than the SDK's error.
      await Promise.race([childGone, new Promise((r) => setTimeout(r, 500))]);
      const why = large ? `the agent sent a message over ${MAX_MESSAGE_BYTES} bytes` : proc.exited() ? "the agent closed the connection before its turn ended" : `ACP: ${err?.message ?? err}`;
      return finish(1, failure(why));
    }),
    closed,
  ]);
}

void main();
