/** The real claude (npm run agent-clis) against a loopback Anthropic Messages API. */
import { claudeEnv } from "./helpers/agent-clis.js";
import { realCliSuite } from "./helpers/real-cli-suite.js";
import { startAnthropic } from "./fixtures/fake-apis/anthropic.js";

realCliSuite({ name: "claude", model: "claude-sonnet-4-5", start: () => startAnthropic(), env: claudeEnv, cost: "reported" });
