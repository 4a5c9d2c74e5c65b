import { Command } from "../commander.js";
import type { CliContext } from "../adapter.js";

export function register(root: Command, _ctx: CliContext): void {
  root
    .command("mcp")
    .description("serve the li MCP surface over stdio: one tool, request(ops, help)")
    .action(async () => {
      // The MCP stack (SDK, ajv, tsyringe) loads only here, never for other commands.
      const { serveStdio } = await import("../../mcp/server.js");
      await serveStdio();
    });
}
