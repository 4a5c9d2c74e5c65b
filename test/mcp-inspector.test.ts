import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { LI_BIN, ROOT, tempHome } from "./helpers/li.js";

const run = promisify(execFile);
// The inspector's CLI mode as a package of its own: the 1.x line runs on Node 20 (the 2.x
// inspector needs Node 22, and its install warned on every newcomer's Node 20).
const INSPECTOR = path.join(ROOT, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js");

/** A second, independent MCP client: the official inspector's CLI. */
async function inspector(env: NodeJS.ProcessEnv, ...args: string[]) {
  // It finds its own package.json by a path it checks from the working directory but imports
  // from its module's: the two agree only when run from its build folder.
  const { stdout } = await run(process.execPath, [INSPECTOR, process.execPath, LI_BIN, "mcp", ...args], { env, cwd: path.dirname(INSPECTOR), timeout: 60000 });
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
