import { Option, type Command } from "../commander.js";

/*
 * --sandbox, on the commands that start runs: a parser builder, so the MCP projector sees it too.
 * What workspace contains is docs/sandbox.md; the worker builds it (src/runtime/sandbox/).
 */

export interface SandboxOptions {
  sandbox?: "workspace" | "off";
}

export function addSandboxOption(cmd: Command, scope: string): Command {
  return cmd.addOption(
    new Option(
      "--sandbox <mode>",
      `workspace: ${scope} runs in an OS sandbox that may write only its own tree and reach only its provider's hosts (refusals are recorded on the run); off: no sandbox. Unset: the profile's sandbox, else sandbox.default in settings.yaml, else off (a li mcp --sandbox workspace server makes every run workspace)`,
    ).choices(["workspace", "off"]),
  );
}

/** The option as the runtime records it (spec.sandbox); absent when not given. */
export function sandboxChoice(o: SandboxOptions): { sandbox?: "workspace" | "off" } {
  return o.sandbox !== undefined ? { sandbox: o.sandbox } : {};
}
