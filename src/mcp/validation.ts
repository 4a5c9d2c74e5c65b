import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from "ajv";
import { ajv as loadAjv } from "../packages.js";
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

function sentence(e: ErrorObject): string {
  const p = paramOf(e);
  switch (e.keyword) {
    case "additionalProperties":
      return `unknown parameter "${p}"`;
    case "required":
      return `missing required parameter "${p}"`;
    case "not":
      return `parameters ${p} cannot be given together`;
    case "enum":
      return `"${p}" must be one of ${JSON.stringify(e.params.allowedValues)}`;
    default:
      return `"${e.instancePath.slice(1).replace(/\//g, ".") || p}" ${e.message}`;
  }
}

/** Closed validation: unknown or misspelled parameters are rejected by name (ADR-0066 D7). */
export function validateArgs(schema: JsonSchema, args: unknown): Invalid | null {
  const fn = compile(schema);
  if (fn(args)) return null;
  const errors = (fn.errors ?? []).filter((e) => e.keyword !== "allOf");
  const params = [...new Set(errors.map(paramOf))];
  return { params, message: [...new Set(errors.map(sentence))].join("; ") };
}

/** Decoder check of a CLI result's `data`. */
export function checkResult(schema: JsonSchema, data: unknown): string | null {
  const fn = compile(schema);
  return fn(data) ? null : ajvInstance().errorsText(fn.errors, { dataVar: "data" });
}
