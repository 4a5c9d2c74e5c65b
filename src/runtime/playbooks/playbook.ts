/**
 * The playbook file format, `<name>.playbook.yaml`:
 *
 *   description: one line shown by `li play list`
 *   prompt: "Review {input} at depth {depth}"   # template: {input} and declared args
 *   model: claude/sonnet                         # the orchestrator (or default worker)
 *   workers: [mock/echo, mock/sleep:0.1]         # pool steps are assigned from (or "m1,m2")
 *   max_concurrent: 2
 *   synthesis: mock/echo                         # or {model: …, prompt: …}
 *   profile: reviewer                            # a profile from settings for every run (li profile list)
 *   plan: {steps: [...]}                         # optional fixed DAG; tasks may use placeholders
 *   args:
 *     depth: {type: int, default: 2, help: "how deep"}
 *     tone: {type: str, choices: [formal, casual], required: true}
 *     strict: {type: bool}
 *
 * Unknown keys are errors, so a misspelt key is never silently ignored. Every error names
 * the playbook (and the arg, where there is one).
 */
import { yaml } from "../../packages.js";
import { invalid } from "../../errors.js";
import { PLAN_LIMITS, validatePlan } from "../flow/plan.js";
import { isObject } from "../../json.js";
import { NAME_PATTERN } from "../../lifecycle/names.js";

export const ARG_TYPES = ["str", "int", "float", "bool"] as const;
export type ArgType = (typeof ARG_TYPES)[number];
export type ArgValue = string | number | boolean;

export interface ArgDecl {
  name: string;
  type: ArgType;
  required: boolean;
  default: ArgValue | null;
  choices: string[] | null;
  help: string | null;
}

export interface PlaybookSpec {
  description: string | null;
  prompt: string | null;
  model: string | null;
  workers: string[];
  max_concurrent: number | null;
  synthesis: { model: string; prompt: string | null } | null;
  /** The default profile of the play's runs (a name; settings define it). */
  profile: string | null;
  plan: unknown;
  args: ArgDecl[];
}

/** Names the `li play` group takes for itself. */
export const RESERVED_NAMES = new Set(["list", "show", "run", "help"]);
export const ARG_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** Placeholder names in the prompt and in fixed-plan tasks. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const TOP_KEYS = ["description", "prompt", "model", "workers", "max_concurrent", "synthesis", "profile", "plan", "args"];
const ARG_KEYS = ["type", "required", "default", "choices", "help"];

/** Refuses a name that is not a plain file stem: no separators, no dot-dot, not a reserved word. */
export function checkPlaybookName(name: string): string {
  if (!NAME_PATTERN.test(name) || name.includes(".."))
    throw invalid(`${JSON.stringify(name)} is not a playbook name: use letters, digits, '.', '_' and '-' (no path separators)`, { playbook: name });
  if (RESERVED_NAMES.has(name)) throw invalid(`${JSON.stringify(name)} is reserved by li play and cannot name a playbook`, { playbook: name });
  return name;
}

/** `--depth`, `--max-items` for max_items. */
export function argFlag(name: string): string {
  return `--${name.replace(/_/g, "-")}`;
}


function typeOk(type: ArgType, v: unknown): boolean {
  switch (type) {
    case "str":
      return typeof v === "string";
    case "int":
      return typeof v === "number" && Number.isInteger(v);
    case "float":
      return typeof v === "number" && Number.isFinite(v);
    case "bool":
      return typeof v === "boolean";
  }
}

export function parsePlaybook(name: string, text: string): PlaybookSpec {
  const fail = (message: string, detail: Record<string, unknown> = {}) => invalid(`playbook ${name}: ${message}`, { playbook: name, ...detail });
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (err: any) {
    throw fail(`not valid YAML: ${err?.message ?? err}`);
  }
  if (!isObject(doc)) throw fail("must be a YAML mapping");
  for (const k of Object.keys(doc)) if (!TOP_KEYS.includes(k)) throw fail(`unknown key ${JSON.stringify(k)} (allowed: ${TOP_KEYS.join(", ")})`, { key: k });

  const str = (key: string): string | null => {
    const v = doc[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== "string") throw fail(`${key} must be a string`, { key });
    return v;
  };
  const description = str("description");
  const prompt = str("prompt");
  const model = str("model");

  let workers: string[] = [];
  if (typeof doc.workers === "string") workers = doc.workers.split(",").map((w) => w.trim()).filter(Boolean);
  else if (Array.isArray(doc.workers) && doc.workers.every((w) => typeof w === "string")) workers = doc.workers as string[];
  else if (doc.workers !== undefined && doc.workers !== null) throw fail("workers must be a list of provider/model strings (or one comma-separated string)", { key: "workers" });

  const mc = doc.max_concurrent;
  if (mc !== undefined && mc !== null && !(typeof mc === "number" && Number.isInteger(mc) && mc >= 1 && mc <= PLAN_LIMITS.max_concurrent))
    throw fail(`max_concurrent must be an integer from 1 to ${PLAN_LIMITS.max_concurrent}`, { key: "max_concurrent" });

  let synthesis: PlaybookSpec["synthesis"] = null;
  const syn = doc.synthesis;
  if (typeof syn === "string") synthesis = { model: syn, prompt: null };
  else if (isObject(syn)) {
    for (const k of Object.keys(syn)) if (k !== "model" && k !== "prompt") throw fail(`synthesis: unknown key ${JSON.stringify(k)} (allowed: model, prompt)`, { key: k });
    if (typeof syn.model !== "string") throw fail("synthesis.model must be a provider/model string", { key: "synthesis" });
    if (syn.prompt !== undefined && syn.prompt !== null && typeof syn.prompt !== "string") throw fail("synthesis.prompt must be a string", { key: "synthesis" });
    synthesis = { model: syn.model, prompt: (syn.prompt as string | undefined) ?? null };
  } else if (syn !== undefined && syn !== null) throw fail("synthesis must be a model string or {model, prompt}", { key: "synthesis" });

  const args = parseArgs(name, doc.args);

  // The plan's structure is checked now (a cycle is a broken playbook, whatever the args);
  // its tasks are checked again once the placeholders are filled in.
  const plan = doc.plan ?? undefined;
  if (plan !== undefined) validatePlan(plan, `playbook ${name}: plan`);

  const known = new Set(["input", ...args.map((a) => a.name)]);
  const templates = [
    ["prompt", prompt ?? ""],
    ["synthesis.prompt", synthesis?.prompt ?? ""],
    ...(plan ? (plan as { steps: { id: string; task: string }[] }).steps.map((s) => [`plan step ${s.id}`, s.task]) : []),
  ];
  for (const [where, t] of templates)
    for (const m of t.matchAll(PLACEHOLDER))
      if (!known.has(m[1])) throw fail(`${where} uses {${m[1]}}, which is neither {input} nor a declared arg`, { placeholder: m[1] });

  const profile = str("profile");
  return { description, prompt, model, workers, max_concurrent: (mc as number | undefined) ?? null, synthesis, profile, plan, args };
}

function parseArgs(playbook: string, raw: unknown): ArgDecl[] {
  if (raw === undefined || raw === null) return [];
  if (!isObject(raw)) throw invalid(`playbook ${playbook}: args must be a mapping of name to declaration`, { playbook });
  return Object.entries(raw).map(([name, d]): ArgDecl => {
    const fail = (message: string) => invalid(`playbook ${playbook}: arg ${name}: ${message}`, { playbook, arg: name });
    if (!ARG_NAME.test(name)) throw fail(`the name must match ${ARG_NAME} (lower-case letters, digits, _)`);
    if (name === "input") throw fail("input is the prompt itself and cannot be declared");
    const decl = d === null || d === undefined ? {} : d;
    if (!isObject(decl)) throw fail(`must be a mapping with keys ${ARG_KEYS.join(", ")}`);
    for (const k of Object.keys(decl)) if (!ARG_KEYS.includes(k)) throw fail(`unknown key ${JSON.stringify(k)} (allowed: ${ARG_KEYS.join(", ")})`);
    const type = (decl.type ?? "str") as ArgType;
    if (!ARG_TYPES.includes(type)) throw fail(`type must be one of ${ARG_TYPES.join(", ")}, got ${JSON.stringify(decl.type)}`);
    const required = decl.required ?? false;
    if (typeof required !== "boolean") throw fail("required must be true or false");
    if (required && type === "bool") throw fail("a bool arg is a flag and cannot be required");
    let choices: string[] | null = null;
    if (decl.choices !== undefined && decl.choices !== null) {
      if (type !== "str") throw fail("choices are only for str args");
      if (!Array.isArray(decl.choices) || decl.choices.length === 0 || !decl.choices.every((c) => typeof c === "string"))
        throw fail("choices must be a non-empty list of strings");
      choices = decl.choices as string[];
    }
    const dflt = decl.default ?? null;
    if (dflt !== null) {
      if (required) throw fail("a required arg cannot have a default");
      if (!typeOk(type, dflt)) throw fail(`default ${JSON.stringify(dflt)} is not a ${type}`);
      if (choices && !choices.includes(dflt as string)) throw fail(`default ${JSON.stringify(dflt)} is not one of the choices (${choices.join(", ")})`);
    }
    if (decl.help !== undefined && decl.help !== null && typeof decl.help !== "string") throw fail("help must be a string");
    return { name, type, required, default: dflt as ArgValue | null, choices, help: (decl.help as string | undefined) ?? null };
  });
}

/**
 * Fills {input} and {arg} placeholders. An optional arg given no value and no default renders
 * as the empty string; a placeholder for anything undeclared was refused at parse time.
 */
export function renderTemplate(template: string, values: Record<string, ArgValue | null>): string {
  return template.replace(PLACEHOLDER, (whole, key: string) => (key in values ? String(values[key] ?? "") : whole));
}

/** The prompt a play runs: the template filled in, or the input appended when the template has no {input}. */
export function renderPrompt(spec: PlaybookSpec, name: string, input: string, args: Record<string, ArgValue | null>): string {
  const template = spec.prompt;
  if (template === null) return input;
  const usesInput = /\{input\}/.test(template);
  if (usesInput && input.trim() === "") throw invalid(`playbook ${name}: its prompt uses {input}; give the input as prompt words or --prompt-file`, { playbook: name, field: "prompt" });
  const rendered = renderTemplate(template, { ...args, input });
  return usesInput || input.trim() === "" ? rendered : `${rendered}\n\n${input}`;
}

/** The fixed plan with its tasks rendered. */
export function renderPlan(plan: unknown, values: Record<string, ArgValue | null>): unknown {
  if (plan === undefined) return undefined;
  const p = plan as { steps: Record<string, unknown>[] };
  return { ...p, steps: p.steps.map((s) => ({ ...s, task: typeof s.task === "string" ? renderTemplate(s.task, values) : s.task })) };
}
