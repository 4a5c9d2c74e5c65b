import { LiError } from "../../errors.js";
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS } from "../../config/approval-settings.js";
import { loadSettings } from "../../config/settings.js";
import { checkRulesForRun } from "../../lifecycle/approvals/rules.js";
import type { ModelSpec } from "../providers/index.js";
import { acpRouteLacking } from "../submit/acp-agents.js";

/*
 * Which providers can route a permission prompt to li (approvals: ask), and what the others
 * would need. A run that asks for it on a provider without a route is refused before any record
 * exists: a run that silently denied what it was told would ask is worse than no run.
 */

/** null when `model` of `provider` has a route; else what the provider would need for one. */
const ROUTES: Record<string, (model: string) => string | null> = {
  mock: (model) => (model === "ask" ? null : "only mock/ask asks for approvals"),
  // --permission-prompt-tool served by li's prompt server (providers/claude.ts, docs/approvals.md#claude).
  claude: () => null,
  // codex app-server's item/*/requestApproval, driven by li's client (providers/codex-app-server/).
  codex: () => null,
  // gemini --acp driven by li's ACP client: session/request_permission (providers/acp/).
  gemini: () => null,
  openai: () => "li's own openai agent has no permission prompts to route",
  // li's ACP client: session/request_permission, when the entry says how its agent is made to ask.
  acp: (model) => acpRouteLacking(model),
};

/** What `model` (provider/model) would need for a route; null when it has one. */
export function routeLacking(model: ModelSpec): string | null {
  return (ROUTES[model.provider.name] ?? (() => `provider ${model.provider.name} has no approval route`))(model.model);
}

export interface ApprovalSpec {
  approvals: "ask";
  approval_timeout_seconds: number;
}

/**
 * What a run records for approvals: the run's own choice, else its profile's; nothing for off.
 * Refuses `ask` with approvals_unsupported for a provider with no route.
 */
export function approvalSpec(model: ModelSpec, asked: { mode?: "ask" | "off"; timeout_seconds?: number } | undefined, profile: { approvals: "ask" | "off" | null; approval_timeout_seconds: number | null } | null): ApprovalSpec | null {
  const mode = asked?.mode ?? profile?.approvals ?? "off";
  if (mode !== "ask") return null;
  const provider = model.provider.name;
  const lacking = routeLacking(model);
  if (lacking)
    throw new LiError("invalid_input", `approvals: ask is not supported for ${model.spec}: ${lacking}; run it with --approvals off (the provider then decides, denying what it would have asked)`, {
      code: "approvals_unsupported",
      field: "approvals",
      provider,
      model: model.spec,
      needs: lacking,
    });
  return { approvals: "ask", approval_timeout_seconds: asked?.timeout_seconds ?? profile?.approval_timeout_seconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS };
}

/**
 * For a run that asks: refuses, before any record, a rule of the settings in force that li will
 * not use (an allow rule on a shell tool without command:, a command: that does not parse);
 * loads the shell parser. Runs that do not ask never get here.
 */
export async function checkApprovalRules(spec: ApprovalSpec | null, settingsDir: string): Promise<void> {
  if (spec?.approvals !== "ask") return;
  await checkRulesForRun(loadSettings(settingsDir).approval_rules);
}
