import type { Command } from "../commander.js";

/*
 * --endpoint, on every command that can start openai runs. It takes a name only: base URLs
 * and key variables live in settings.yaml, so no argument can say where a key is sent.
 */
export function addEndpointOption(cmd: Command): Command {
  return cmd.option(
    "--endpoint <name>",
    "openai: the endpoint from settings.yaml to send to (default: default_endpoint, else the built-in openai); li doctor lists them",
  );
}
