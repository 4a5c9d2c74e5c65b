import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from "ajv";
import { ajv as loadAjv } from "../packages.js";
import { nearest } from "./near.js";
import { clip, echo, listed } from "./echo.js";
import type { JsonSchema } from "./verb.js";

let instance: AjvInstance | undefined;
const ajvInstance = () => (instance ??= new (loadAjv().Ajv)({ allErrors: true, strict: false }));
// Keyed by content: a two-stage verb projects a fresh schema object per call, and ajv keeps
// every schema it compiles, so an identity key would grow without bound in a long-lived server.
const compiled = new Map<string, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    fn = ajvInstance().compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

export interface Invalid {
  /** The offending parameter names. */
  params: string[];
  message: string;
}

function paramOf(e: ErrorObject): string {
  if (e.keyword === "additionalProperties") return String(e.params.additionalProperty);
  if (e.keyword === "required") return String(e.params.missingProperty);
  const top = e.instancePath.split("/")[1];
  if (top) return top;
  if (e.keyword === "not") return String((e.schema as any)?.required?.join(" and ") ?? "(args)");
  return "(args)";
}

function sentence(e: ErrorObject, schema: JsonSchema): string {
  const p = paramOf(e);
  switch (e.keyword) {
    case "additionalProperties": {
      const near = nearest(p, Object.keys(schema.properties ?? {}));
      return `unknown parameter "${clip(p)}"${near.length ? ` (did you mean ${near.map((n) => `"${n}"`).join(" or ")}?)` : ""}`;
    }
    case "required":
      return `missing required parameter "${p}"`;
    case "not":
      return `parameters ${p} cannot be given together`;
    case "enum":
      return `"${clip(p)}" must be one of ${JSON.stringify(e.params.allowedValues)}`;
    default:
      return `"${clip(e.instancePath.slice(1).replace(/\//g, ".") || p)}" ${e.message}`;
  }
}

/** Closed validation: unknown or misspelled parameters are rejected by name (ADR-0066 D7). */
/** The one-of-a-group rule (a prompt or a prompt file): its branches are single required names. */
function groupOf(e: ErrorObject, schema: JsonSchema): string[] | null {
  if (e.keyword !== "anyOf") return null;
  // ajv names the failing keyword by path ("#/allOf/1/anyOf"); the branches are read from there.
  const branches = e.schemaPath.replace(/^#\//, "").split("/").reduce<any>((node, key) => node?.[key], schema);
  return Array.isArray(branches) && branches.every((b: any) => Array.isArray(b?.required) && b.required.length === 1 && Object.keys(b).length === 1)
    ? branches.map((b: any) => b.required[0])
    : null;
}

export function validateArgs(schema: JsonSchema, args: unknown): Invalid | null {
  const fn = compile(schema);
  if (fn(args)) return null;
  const all = fn.errors ?? [];
  const groups = all.map((e) => ({ e, names: groupOf(e, schema) })).filter((g) => g.names) as { e: ErrorObject; names: string[] }[];
  const missing = groups.map((g) => ({ params: g.names, message: `give one of ${g.names.map((n) => `"${n}"`).join(" or ")}` }));
  // A group's own branch errors ("missing prompt", "missing prompt_file") are said once, as the group.
  const inGroup = (e: ErrorObject) => groups.some((g) => e !== g.e && e.schemaPath.startsWith(g.e.schemaPath + "/"));
  const errors = all.filter((e) => e.keyword !== "allOf" && !groupOf(e, schema) && !inGroup(e));
  // Every unknown key is an error of its own: the names and sentences echoed are bounded, however many.
  const params = echo([...new Set([...errors.map(paramOf), ...missing.flatMap((m) => m.params)])]) as string[];
  const sentences = [...new Set([...errors.map((e) => sentence(e, schema)), ...missing.map((m) => m.message)])];
  return { params, message: listed(sentences, (s) => s, "; ") };
}

/** Decoder check of a CLI result's `data`. */
export function checkResult(schema: JsonSchema, data: unknown): string | null {
  const fn = compile(schema);
  return fn(data) ? null : ajvInstance().errorsText(fn.errors, { dataVar: "data" });
}
