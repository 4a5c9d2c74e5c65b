import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LiError } from "../../errors.js";
import { childEnv } from "../../lifecycle/child-env.js";
import { pipeProviderStream } from "../worker/provider-stream.js";
import { parseModelSpec } from "../providers/index.js";
import { parserFor } from "../providers/streams/index.js";
import { runSettingsFor } from "../submit/run-settings.js";
import { PLAN_LIMITS, type Plan } from "./plan.js";
import { plannerPrompt } from "./prompts.js";
import { finishModelPlan, plannerPool, sessionEndpoint, type SessionSpec } from "./request.js";

/**
 * --dry-run with a real orchestrator: one planning call in the foreground, with no record
 * (a dry run writes nothing to the store). The provider runs exactly as a planner step would,
 * under the session's profile, and its answer is its final one (the stream read as the worker
 * reads it), else its plain stdout.
 */
export async function planInForeground(spec: SessionSpec, goal: string, timeoutMs = 600_000): Promise<Plan> {
  const model = spec.model!;
  const parsed = parseModelSpec(model);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-plan-"));
  try {
    const promptFile = path.join(dir, "prompt.txt");
    fs.writeFileSync(promptFile, plannerPrompt(goal, plannerPool(spec)), { mode: 0o600 });
    const { run, env } = runSettingsFor({ model, profile: spec.profile ?? null }, spec.settings_dir);
    const endpoint = parsed.provider.usesEndpoint ? { endpoint: (await sessionEndpoint(spec))() } : {};
    const launch = parsed.provider.launch(parsed.model, promptFile, { ...endpoint, run });
    const text = await new Promise<string>((resolve, reject) => {
      const child = spawn(launch.argv[0], launch.argv.slice(1), {
        cwd: spec.cwd,
        stdio: [launch.stdin === "prompt" ? fs.openSync(promptFile, "r") : "ignore", "pipe", "pipe"],
        // The planner is an agent, not li: no store URL or credentials (D9; see child-env.ts).
        env: childEnv(process.env, env, launch.env),
      });
      const parser = launch.stream === "text" ? null : parserFor(launch.stream);
      const out: Buffer[] = [];
      let size = 0;
      let err = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const streamed = parser ? pipeProviderStream(child.stdout!, parser, { console: null, raw: null }, () => {}) : Promise.resolve();
      if (!parser)
        child.stdout!.on("data", (d: Buffer) => {
          size += d.length;
          if (size <= PLAN_LIMITS.max_plan_bytes + 1) out.push(d);
        });
      child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
      child.on("error", (e) => {
        clearTimeout(timer);
        reject(new LiError("unavailable", `could not start the planner ${model}: ${e.message}`, { model }));
      });
      child.on("close", async (code, signal) => {
        clearTimeout(timer);
        await streamed;
        const end = parser?.end({ code, signal });
        if (end?.error) reject(new LiError("unavailable", `the planner ${model} failed (${end.error.class}): ${end.error.message}`, { model, error_class: end.error.class }));
        else if (code !== 0) reject(new LiError("unavailable", `the planner ${model} exited ${code}: ${err.trim()}`, { model, exit_code: code }));
        else resolve(end ? (end.result_text ?? "") : Buffer.concat(out).toString("utf8"));
      });
    });
    return await finishModelPlan(text, spec, `plan from ${model}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
