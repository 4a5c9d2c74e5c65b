/** The real gemini (npm run agent-clis) against a loopback Gemini API. */
import { geminiEnv } from "./helpers/agent-clis.js";
import { realCliSuite } from "./helpers/real-cli-suite.js";
import { startGemini } from "./fixtures/fake-apis/gemini.js";

realCliSuite({ name: "gemini", model: "gemini-2.5-flash", start: () => startGemini(), env: (home, url) => geminiEnv(home, url), cost: null });
