// What an MCP client pays at li's start-up (issue 48's guards): connecting (spawn + initialize) and
// one job.list op's round trip, interleaved with `node -e 0` in the same run.
import fs from "node:fs";
import { benchHome, li, median, runChecked, timeSync } from "./bench-lib.mjs";

const since = (t) => Number(process.hrtime.bigint() - t) / 1e6;

export async function benchMcpStartup({ rounds }) {
  const { home, env } = benchHome("li-bench-mcp-startup-");
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const connect = async () => {
    const c = new Client({ name: "bench", version: "0" });
    await c.connect(new StdioClientTransport({ command: process.execPath, args: [li, "mcp"], env, stderr: "ignore" }));
    return c;
  };
  try {
    for (let i = 0; i < 5; i++) runChecked(process.execPath, [li, "agent", "mock/echo", `bench ${i}`], { env });
    const client = await connect();
    const op = async () => {
      const t = process.hrtime.bigint();
      const r = await client.callTool({ name: "request", arguments: { ops: [{ op: "job.list", args: { limit: 5 } }] } });
      if (r.structuredContent.status !== "success") throw new Error(JSON.stringify(r.structuredContent));
      return since(t);
    };
    await op();
    const node = [];
    const ops = [];
    const connects = [];
    try {
      for (let r = 0; r < rounds; r++) {
        node.push(timeSync(() => runChecked(process.execPath, ["-e", "0"], {})));
        ops.push(await op());
        const t = process.hrtime.bigint();
        const c = await connect();
        connects.push(since(t));
        await c.close();
      }
    } finally {
      await client.close();
    }
    return { rounds, op: median(ops) / median(node), connect: median(connects) / median(node), medians: { node: median(node), op: median(ops), connect: median(connects) } };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
