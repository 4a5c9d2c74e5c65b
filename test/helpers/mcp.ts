import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LI_BIN, ROOT } from "./li.js";

export interface McpSession {
  client: Client;
  /** Calls the request tool; returns the raw tool result. */
  raw(args: Record<string, unknown>): Promise<any>;
  /** Calls the request tool and returns structuredContent (asserting it mirrors the text). */
  call(args: Record<string, unknown>): Promise<any>;
  /** help=<verb>, then the fingerprint. */
  fingerprint(verb: string): Promise<string>;
  /** One op; returns its per-op result envelope. */
  op(op: string, args?: Record<string, unknown>, schema_fingerprint?: string): Promise<any>;
  close(): Promise<void>;
}

/** A real MCP client over stdio, spawning `node bin/li.js mcp` with the given environment. */
export async function connectMcp(env: NodeJS.ProcessEnv): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [LI_BIN, "mcp"],
    env: Object.fromEntries(Object.entries({ ...env, NODE_OPTIONS: "" }).filter(([, v]) => v !== undefined)) as Record<string, string>,
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "li-test", version: "0.0.0" });
  await client.connect(transport);
  const raw = (args: Record<string, unknown>) => client.callTool({ name: "request", arguments: args }, undefined, { timeout: 120000 });
  const call = async (args: Record<string, unknown>) => {
    const r: any = await raw(args);
    if (r.isError) throw new Error(`request refused: ${r.content?.[0]?.text}`);
    const text = JSON.parse(r.content[0].text);
    if (JSON.stringify(text) !== JSON.stringify(r.structuredContent)) throw new Error("structuredContent and text differ");
    return r.structuredContent;
  };
  return {
    client,
    raw,
    call,
    fingerprint: async (verb) => (await call({ help: verb })).schema_fingerprint,
    op: async (op, args, schema_fingerprint) => {
      const r = await call({ ops: [{ op, ...(args ? { args } : {}), ...(schema_fingerprint ? { schema_fingerprint } : {}) }] });
      return r.results[0];
    },
    close: () => client.close(),
  };
}
