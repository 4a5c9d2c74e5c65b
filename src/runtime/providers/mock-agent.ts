/**
 * The mock agent process: `node mock-agent.cjs <model> <prompt-file>`.
 * Its behaviour is fixed by the external contract; keep it dependency-free so it starts fast.
 */
import fs from "node:fs";
import { runEdits } from "./mock-edit.js";
import { runSpend } from "./mock-spend.js";
import { runHostile } from "./mock-hostile.js";
import { runAsk } from "./mock-ask.js";

const [model = "", promptFile = ""] = process.argv.slice(2);
const [name, arg] = model.split(":");
// hang ignores SIGTERM from before it reads its prompt, so a reader that sees the prompt read
// (tests watch rchar) knows the signal is already ignored.
if (name === "hang") process.on("SIGTERM", () => {});
const prompt = fs.readFileSync(promptFile);

const echo = () => fs.writeSync(1, prompt);

switch (name) {
  case "echo":
    echo();
    break;
  case "sleep":
    setTimeout(echo, Number(arg) * 1000);
    break;
  case "fail":
    fs.writeSync(2, prompt);
    process.exitCode = Number(arg);
    break;
  case "hang":
    setInterval(() => {}, 1 << 30);
    break;
  case "flood": {
    let left = Number(arg);
    const chunk = Buffer.alloc(64 * 1024, "x");
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      fs.writeSync(1, chunk, 0, n);
      left -= n;
    }
    break;
  }
  case "edit":
    process.exitCode = runEdits(prompt.toString("utf8"));
    break;
  case "spend":
    process.exitCode = runSpend(model, (line) => fs.writeSync(1, line));
    break;
  case "hostile":
    void runHostile(prompt.toString("utf8")).then((code) => (process.exitCode = code));
    break;
  case "ask":
    void runAsk(prompt.toString("utf8")).then((code) => (process.exitCode = code));
    break;
  default:
    fs.writeSync(2, `mock-agent: unknown model ${model}\n`);
    process.exitCode = 2;
}
