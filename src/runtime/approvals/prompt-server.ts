/**
 * `node prompt-server.cjs`: the stdio MCP server claude's --permission-prompt-tool calls
 * (mcp__li_approvals__approve). Each call is forwarded over LI_APPROVAL_SOCKET to the run's
 * worker, which holds it until a person, a rule or the timeout answers (docs/approvals.md).
 * Hand-written JSON-RPC rather than the MCP SDK: it starts once per claude run and must not
 * load the CLI.
 */
import { askApproval, type Answer, type AskRequest } from "./ask-client.js";
import { APPROVAL_SOCKET_ENV } from "./protocol.js";

const TOOL = "approve";

const TOOLS = [
  {
    name: TOOL,
    description: "Ask li's approvals inbox whether a tool use may go ahead; waits for the answer.",
    inputSchema: {
      type: "object",
      properties: { tool_name: { type: "string" }, input: { type: "object" }, tool_use_id: { type: "string" } },
      required: ["tool_name", "input"],
    },
  },
];

type Msg = { jsonrpc: "2.0"; id?: number | string; method?: string; params?: any };

const send = (m: unknown): void => void process.stdout.write(JSON.stringify(m) + "\n");

/** The answer to one call: a channel that cannot be reached denies, never allows. */
async function decide(args: any): Promise<Answer> {
  const socket = process.env[APPROVAL_SOCKET_ENV];
  const req: AskRequest = { tool_name: String(args?.tool_name ?? ""), input: args?.input && typeof args.input === "object" ? args.input : {}, tool_use_id: String(args?.tool_use_id ?? "") };
  if (!socket) return { behavior: "deny", message: "li: this run has no approval channel (LI_APPROVAL_SOCKET is unset)" };
  try {
    return await askApproval(socket, req);
  } catch (e) {
    return { behavior: "deny", message: `li: the approval channel failed: ${(e as Error).message}` };
  }
}

async function handle(m: Msg): Promise<void> {
  if (m.id === undefined) return; // a notification (initialized, cancelled): nothing to answer
  const reply = (result: unknown) => send({ jsonrpc: "2.0", id: m.id, result });
  switch (m.method) {
    case "initialize":
      return reply({ protocolVersion: m.params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "li-approvals", version: "1" } });
    case "ping":
      return reply({});
    case "tools/list":
      return reply({ tools: TOOLS });
    case "tools/call": {
      if (m.params?.name !== TOOL) return send({ jsonrpc: "2.0", id: m.id, error: { code: -32602, message: `unknown tool ${m.params?.name}` } });
      const answer = await decide(m.params?.arguments);
      return reply({ content: [{ type: "text", text: JSON.stringify(answer) }] });
    }
    default:
      return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `method not found: ${m.method}` } });
  }
}

let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d: string) => {
  buf += d;
  for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (!line) continue;
    let m: Msg;
    try {
      m = JSON.parse(line);
    } catch {
      continue;
    }
    void handle(m);
  }
});
process.stdin.on("end", () => process.exit(0));
