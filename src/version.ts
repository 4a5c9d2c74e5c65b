/** li's release version (the CLI's --version, the MCP server's serverInfo). */
export const VERSION = "0.1.0";
