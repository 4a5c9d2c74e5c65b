import { Command } from "../commander.js";
import { render, type CliContext } from "../adapter.js";
import { clientConfig, CLIENTS } from "./mcp-config.js";

export function register(root: Command, ctx: CliContext): void {
  const mcp = root
    .command("mcp")
    .description("serve the li MCP surface over stdio: one tool, request(ops, help)")
    .addHelpText(
      "after",
      `
li mcp speaks MCP over stdio: an MCP client starts it, it is not run by hand.
  li mcp config claude-code     prints a ready configuration (also ${CLIENTS.slice(1).join(", ")})
  li mcp info                   what a server started from this install would report`,
    )
    .action(async () => {
      if (process.stdin.isTTY)
        process.stderr.write(`li mcp speaks MCP over stdio and waits for a client on stdin.\nTo use it, configure a client: li mcp config ${CLIENTS.join("|")}\n`);
      // The MCP stack (SDK, ajv, tsyringe) loads only here, never for other commands.
      const { serveStdio } = await import("../../mcp/server.js");
      await serveStdio();
    });

  mcp
    .command("info")
    .description("the li that answers: version, build id, LI_HOME, providers, and the MCP surface's limits")
    .action(() =>
      render(ctx, async () => {
        const { serverInfo } = await import("./mcp-info.js");
        const data = serverInfo();
        return { data, human: (d: typeof data) => JSON.stringify(d, null, 2) };
      }),
    );

  mcp
    .command("config")
    .description("print a ready MCP client configuration for this install (absolute paths, the LI_HOME in force)")
    .argument("<client>", CLIENTS.join(" | "))
    .addHelpText("after", "\nMCP clients do not pass your shell's environment: the printed LI_HOME keeps the server on your store.")
    .action((client: string) =>
      render(ctx, () => {
        const data = clientConfig(client);
        return {
          data,
          human: (d: any) => [`# ${d.file}`, d.toml ?? JSON.stringify(d.config, null, 2), ...(d.command ? ["", `# or: ${d.command}`] : [])].join("\n"),
        };
      }),
    );
}
