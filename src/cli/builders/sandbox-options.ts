import { Option, type Command } from "../commander.js";

/*
 * STAND-IN (wt-sbxsurface) matching the builder wt-sbxcore owns; the merge takes its version.
 * --sandbox on every command that starts runs: a parser builder, so the MCP projector sees it.
 */

export interface SandboxOptions {
  sandbox?: "workspace" | "off";
}

export function addSandboxOption(cmd: Command, scope: string): Command {
  return cmd.addOption(
    new Option(
      "--sandbox <mode>",
      `workspace: ${scope} runs contained (writes only in its own tree, its temp dir and the provider's state; no reads of li's store, settings or credentials; network only to its provider's hosts); off: not contained. Default: the profile's sandbox, else sandbox.default in settings.yaml, else off`,
    ).choices(["workspace", "off"]),
  );
}

/** The option as the runtime takes it (AgentRequest.sandbox). */
export function sandboxChoice(o: SandboxOptions): { sandbox?: "workspace" | "off" } {
  return o.sandbox !== undefined ? { sandbox: o.sandbox } : {};
}
