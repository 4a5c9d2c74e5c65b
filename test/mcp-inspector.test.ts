import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { LI_BIN, ROOT, tempHome } from "./helpers/li.js";

const run = promisify(execFile);
const INSPECTOR = path.join(ROOT, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");

/** A second, independent MCP client: the official inspector's CLI mode. */
async function inspector(env: NodeJS.ProcessEnv, ...args: string[]) {
  const { stdout } = await run(process.execPath, [INSPECTOR, "--cli", process.execPath, LI_BIN, "mcp", ...args], { env, cwd: ROOT, timeout: 60000 });
  return JSON.parse(stdout);
}

test("the MCP inspector lists the one tool and calls it", async () => {
  const h = tempHome();
  try {
    const list = await inspector(h.env, "--method", "tools/list");
    expect(list.tools.map((t: any) => t.name)).toEqual(["request"]);
    const call = await inspector(h.env, "--method", "tools/call", "--tool-name", "request", "--tool-arg", "help=true");
    expect(call.structuredContent.catalog.map((c: any) => c.verb)).toContain("job.wait");
    expect(JSON.parse(call.content[0].text)).toEqual(call.structuredContent);
  } finally {
    h.cleanup();
  }
});
