/** Set by `li mcp` on every li it starts: the server's pid. */
export const SERVER_PID_ENV = "LI_MCP_SERVER_PID";

/**
 * An observer started by the MCP server ends by itself soon after that server is gone (killed,
 * crashed): nobody is left to read its answer. It only stops observing; no record is touched.
 */
export function exitWhenServerGone(everyMs = 500): void {
  const server = Number(process.env[SERVER_PID_ENV]);
  if (!Number.isInteger(server) || server <= 1 || process.ppid !== server) return;
  setInterval(() => {
    if (process.ppid !== server) process.exit(1);
  }, everyMs).unref();
}
