/**
 * Stand-in `claude`, `codex` and `gemini` executables: each logs how it was called (argv, cwd,
 * the LI_TEST_* environment, its stdin) and prints the recorded stream of test/fixtures/streams/
 * <bin>/<scenario>.jsonl, the scenario being the first word of its prompt. See that directory's
 * README for the `#` directions (sleep, hang, exit, expect-args).
 */
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./li.js";

export const FIXTURES = path.join(ROOT, "test", "fixtures", "streams");

const SCRIPT = (bin: string) => `#!${process.execPath}
const fs = require("node:fs");
const path = require("node:path");
const argv = process.argv.slice(2);
const prompt = fs.readFileSync(0, "utf8");
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("LI_TEST_")));
fs.appendFileSync(process.env.STANDIN_LOG, JSON.stringify({ bin: ${JSON.stringify(bin)}, argv, cwd: process.cwd(), env, prompt, pid: process.pid }) + "\\n");
const scenario = prompt.trim().split(/\\s+/)[0];
const file = path.join(${JSON.stringify(FIXTURES)}, ${JSON.stringify(bin)}, scenario + ".jsonl");
if (!fs.existsSync(file)) { process.stderr.write("stand-in ${bin}: no scenario " + scenario + "\\n"); process.exit(2); }
const lines = fs.readFileSync(file, "utf8").split("\\n").filter(Boolean);
const sleep = (s) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, s * 1000);
for (const line of lines) {
  if (!line.startsWith("#")) { fs.writeSync(1, line + "\\n"); continue; }
  const [cmd, ...rest] = line.slice(1).split(" ");
  if (cmd === "sleep") sleep(Number(rest[0]));
  else if (cmd === "exit") process.exit(Number(rest[0]));
  else if (cmd === "hang") { setInterval(() => {}, 1 << 30); return; }
  else if (cmd === "expect-args") {
    const at = argv.indexOf(rest[0]);
    if (at < 0 || rest.some((a, i) => argv[at + i] !== a)) {
      process.stderr.write("stand-in ${bin}: expected the arguments " + rest.join(" ") + ", got " + argv.join(" ") + "\\n");
      process.exit(3);
    }
  }
}
`;

export interface StandinCall {
  bin: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  prompt: string;
  pid: number;
}

/** Writes the three stand-ins into `dir/bin`; returns the environment that puts them first on PATH. */
export function installStandins(dir: string): { env: Record<string, string>; calls: () => StandinCall[] } {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  for (const name of ["claude", "codex", "gemini"]) fs.writeFileSync(path.join(bin, name), SCRIPT(name), { mode: 0o755 });
  const log = path.join(dir, "standin.log");
  return {
    env: { PATH: `${bin}:${process.env.PATH}`, STANDIN_LOG: log },
    calls: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []),
  };
}
