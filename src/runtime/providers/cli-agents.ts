import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import type { Provider } from "./types.js";

/** The first executable named `bin` on PATH. */
export function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, bin);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** A real agent CLI found on PATH, given the prompt on stdin. */
function cliAgent(name: string, bin: string, install: string, args: (model: string) => string[]): Provider {
  return {
    name,
    summary: `the ${bin} CLI agent (${install})`,
    validateModel(model) {
      if (!MODEL.test(model)) throw invalid(`${JSON.stringify(model)} is not a valid ${name} model name`, { model });
    },
    availability() {
      const found = which(bin);
      return found
        ? { available: true, detail: found }
        : { available: false, detail: `${bin} not found on PATH`, remedy: `install it: ${install}` };
    },
    launch(model) {
      return { argv: [bin, ...args(model)], stdin: "prompt" };
    },
  };
}

export const claudeProvider = cliAgent("claude", "claude", "npm install -g @anthropic-ai/claude-code", (m) => ["-p", "--model", m]);
export const codexProvider = cliAgent("codex", "codex", "npm install -g @openai/codex", (m) => ["exec", "--model", m, "-"]);
export const geminiProvider = cliAgent("gemini", "gemini", "npm install -g @google/gemini-cli", (m) => ["--model", m]);
