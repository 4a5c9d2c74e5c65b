export async function serveStdio(): Promise<void> { throw new Error("li mcp is not built yet"); }
