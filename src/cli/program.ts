import { Command } from "./commander.js";
import type { CliContext } from "./adapter.js";
import { COMMANDS } from "./registry.js";
import { VERSION } from "../version.js";

export { VERSION };

function root(): Command {
  return new Command("li")
    .description("li: run AI agents as supervised background jobs, and serve them over MCP")
    .version(VERSION, "-V, --version")
    .option("--machine", "print exactly one li.result JSON object on stdout (human text goes to stderr)")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      "\nExit status: 0 ok, 2 invalid input, 1 any other failure (li wait documents its own).\nState lives in $LI_HOME (default $XDG_STATE_HOME/li).",
    );
}

/**
 * The root program with `only` fully built and every other command as a one-line stub,
 * so a run pays for one command's imports. `all` builds every command (projection, help).
 */
export async function buildProgram(ctx: CliContext, opts: { only?: string; all?: boolean } = {}): Promise<Command> {
  const program = root();
  for (const entry of COMMANDS) {
    if (opts.all || entry.name === opts.only) {
      (await entry.load()).register(program, ctx);
    } else {
      program.command(entry.name).description(entry.summary).helpOption(false).allowUnknownOption().allowExcessArguments();
    }
  }
  return program;
}
