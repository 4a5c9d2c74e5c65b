import { invalid } from "../../errors.js";
import { which } from "../on-path.js";
import type { Capabilities, LaunchSpec, Provider, RunSettings, StreamFormat } from "./types.js";

const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

export interface CliAgentDef {
  name: string;
  bin: string;
  install: string;
  stream: StreamFormat;
  capabilities: Capabilities;
  /** The argv after the binary: the machine-readable mode, the model and what `run` asks for. */
  args(model: string, run: RunSettings, sandboxed: boolean): string[];
  /** Variables the CLI gets besides li's environment, on every run. */
  env?(): Record<string, string>;
  /** Variables the CLI gets besides li's environment, when inside li's sandbox. */
  sandboxEnv?: Record<string, string>;
  sessionTotals?: Provider["sessionTotals"];
}

/** A real agent CLI found on PATH, given the prompt on stdin, read in its machine-readable mode. */
export function cliAgent(def: CliAgentDef): Provider {
  return {
    name: def.name,
    summary: `the ${def.bin} CLI agent (${def.install})`,
    capabilities: def.capabilities,
    validateModel(model) {
      if (!MODEL.test(model)) throw invalid(`${JSON.stringify(model)} is not a valid ${def.name} model name`, { model });
    },
    availability() {
      const found = which(def.bin, process.env.PATH);
      return found
        ? { available: true, detail: found }
        : { available: false, detail: `${def.bin} not found on PATH`, remedy: `install it: ${def.install}` };
    },
    launch(model, _promptFile, options): LaunchSpec {
      const sandboxed = options.sandbox === "workspace";
      const env = { ...def.env?.(), ...(sandboxed ? def.sandboxEnv : undefined) };
      return { argv: [def.bin, ...def.args(model, options.run ?? {}, sandboxed)], stdin: "prompt", stream: def.stream, ...(Object.keys(env).length ? { env } : {}) };
    },
    ...(def.sessionTotals ? { sessionTotals: def.sessionTotals } : {}),
  };
}

/** `[flag, value]` when the value is set, else nothing. */
export function opt(flag: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [flag, String(value)];
}
