import { entryScript } from "../../entrypoints.js";
import { invalid } from "../../errors.js";
import { parseSpend, SPEND_PATTERN } from "./mock-spend.js";
import type { Provider } from "./types.js";

/** The offline provider of the contract; its models are behaviours, run by mock-agent.cjs. */
export const MOCK_MODELS = ["echo", "sleep:S", "fail:C", "hang", "flood:N", "edit", "spend:TOKENS:SECONDS", "ask"] as const;

const PATTERNS: RegExp[] = [/^echo$/, /^sleep:\d+(\.\d+)?$/, /^fail:([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$/, /^hang$/, /^flood:\d+$/, /^edit$/, SPEND_PATTERN, /^ask$/];

export const mockProvider: Provider = {
  name: "mock",
  summary: "offline stand-in: mock/echo, mock/sleep:S, mock/fail:C, mock/hang, mock/flood:N, mock/edit, mock/spend:TOKENS:SECONDS, mock/ask",
  // Plain text on stdout: no structured result, so li job output shows its console. mock/spend
  // alone speaks claude's stream-json, and is read as claude is.
  capabilities: { supports: {} },
  validateModel(model) {
    if (model === "hostile") {
      if (process.env.LI_TEST_HOSTILE_MOCK === "1") return;
      throw invalid("mock/hostile runs the commands its prompt names, so li accepts it only in its own tests (LI_TEST_HOSTILE_MOCK=1 in li's environment)", { model });
    }
    if (!PATTERNS.some((p) => p.test(model)))
      throw invalid(`unknown mock model ${JSON.stringify(model)}; mock models are ${MOCK_MODELS.map((m) => "mock/" + m).join(", ")}`, {
        model,
      });
    const spend = parseSpend(model);
    if (spend && "error" in spend) throw invalid(spend.error, { field: "model", model });
  },
  availability: () => ({ available: true, detail: "built in" }),
  launch(model, promptFile) {
    return { argv: [process.execPath, entryScript("mock-agent"), model, promptFile], stdin: "ignore", stream: SPEND_PATTERN.test(model) ? "claude" : "text" };
  },
};
