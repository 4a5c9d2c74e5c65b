import { VERSION } from "../cli/program.js";
import { Surface } from "./surface.js";
import { REQUEST_TOOL } from "./tool.js";

/** The surface every server instance shares: the composition root's registry over the CLI's parsers. */
export async function createSurface(now?: () => Date): Promise<Surface> {
  // The DI world's entry point: decorators need reflect-metadata before any verb class loads.
  await import("reflect-metadata");
  const { composeRegistry } = await import("../../verbs/index.js");
  const { buildProgram } = await import("../cli/program.js");
  return new Surface(composeRegistry(), () => buildProgram({ machine: true, live: process.stderr }, { all: true }), now);
}

/** `li mcp`: one tool, `request`, over stdio, served by the SDK's low-level Server. */
export async function serveStdio(): Promise<void> {
  const [{ Server }, { StdioServerTransport }, { ListToolsRequestSchema, CallToolRequestSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  // The registry, ajv and the CLI's parsers load on the first call, so connecting stays cheap.
  let ready: Promise<[Surface, typeof import("./call.js")]> | undefined;
  const load = () => (ready ??= Promise.all([createSurface(), import("./call.js")]));
  const server = new Server({ name: "li", version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [REQUEST_TOOL as any] }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const [surface, { handleRequest, refuse }] = await load();
    if (req.params.name !== REQUEST_TOOL.name) return refuse(`there is one tool, "request"; ${JSON.stringify(req.params.name)} does not exist`) as any;
    return (await handleRequest(surface, req.params.arguments)) as any;
  });
  await server.connect(new StdioServerTransport());
  await new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
}
