/** The real codex (npm run agent-clis) against a loopback OpenAI Responses API. */
import { codexEnv } from "./helpers/agent-clis.js";
import { realCliSuite } from "./helpers/real-cli-suite.js";
import { startResponses } from "./fixtures/fake-apis/openai-responses.js";

realCliSuite({ name: "codex", model: "gpt-5", start: () => startResponses(), env: (home, url) => codexEnv(home, url), cost: null });
