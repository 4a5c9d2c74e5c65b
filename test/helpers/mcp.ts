import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type Home, LI_BIN, ROOT, tempHome } from "./li.js";

export interface McpSession {
  client: Client;
  /** Calls the request tool; returns the raw tool result. */
  raw(args: Record<string, unknown>): Promise<any>;
  /** Calls the request tool and returns structuredContent (asserting it mirrors the text). */
  call(args: Record<string, unknown>): Promise<any>;
  /** help=<verb>, then the fingerprint. */
  fingerprint(verb: string): Promise<string>;
  /** One op; returns its per-op result envelope. `keys` are further op keys (playbook_fingerprint). */
  op(op: string, args?: Record<string, unknown>, schema_fingerprint?: string, keys?: Record<string, unknown>): Promise<any>;
  /** One op under the verb's current fingerprint (a spawn verb); throws with the error if refused, else returns its result. */
  submit(verb: string, args: Record<string, unknown>): Promise<any>;
  /** job.wait on one id, asserting the call succeeded and it ended within the window; returns its entry. */
  waitTerminal(id: string, max_wait_seconds?: number): Promise<any>;
  close(): Promise<void>;
  /** The server's pid. */
  pid: number | null;
  /** The method of every JSON-RPC request the server was sent on this connection, in order (what went over its stdin, whoever made it). */
  requests(): string[];
}

/** A real MCP client over stdio, spawning `node bin/li.js mcp [args]` with the given environment. */
export async function connectMcp(env: NodeJS.ProcessEnv, args: string[] = []): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [LI_BIN, "mcp", ...args],
    env: Object.fromEntries(Object.entries({ ...env, NODE_OPTIONS: "" }).filter(([, v]) => v !== undefined)) as Record<string, string>,
    cwd: ROOT,
    stderr: "pipe",
  });
  // Every request as it goes over the wire: the SDK's own (initialize, a tools/list it may make) as well as the test's.
  const sent: string[] = [];
  const send = transport.send.bind(transport);
  transport.send = (...args: Parameters<typeof send>) => {
    const message = args[0];
    if ("method" in message && "id" in message) sent.push(message.method);
    return send(...args);
  };
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
  const fingerprint = async (verb: string) => (await call({ help: verb })).schema_fingerprint;
  const op = async (op: string, args?: Record<string, unknown>, schema_fingerprint?: string, keys: Record<string, unknown> = {}) => {
    const r = await call({ ops: [{ op, ...(args ? { args } : {}), ...(schema_fingerprint ? { schema_fingerprint } : {}), ...keys }] });
    return r.results[0];
  };
  return {
    client,
    raw,
    call,
    fingerprint,
    op,
    submit: async (verb, args) => {
      const r = await op(verb, args, await fingerprint(verb));
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      return r.result;
    },
    waitTerminal: async (id, max_wait_seconds = 30) => {
      const w = await op("job.wait", { ids: [id], max_wait_seconds, poll_interval_seconds: 0.2 });
      expect(w.ok).toBe(true);
      expect(w.result.all_terminal).toBe(true);
      return w.result.entries[0];
    },
    close: () => client.close(),
    pid: transport.pid,
    requests: () => [...sent],
  };
}

/**
 * One LI_HOME and one server for a whole test file, closed after it. `setup` prepares the home
 * before the server starts.
 */
export function sharedMcp(setup?: (h: Home) => void): { h: Home; m: McpSession } {
  const shared = {} as { h: Home; m: McpSession };
  beforeAll(async () => {
    shared.h = tempHome();
    setup?.(shared.h);
    shared.m = await connectMcp(shared.h.env);
  });
  afterAll(async () => {
    await shared.m?.close();
    shared.h?.cleanup();
  });
  return shared;
}
