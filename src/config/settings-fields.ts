import { LiError } from "../errors.js";
import { isObject } from "../json.js";

/*
 * Field checks shared by the sections of settings.yaml. Every refusal names the file and the
 * key, so a broken file says where to look rather than only what is wrong.
 */

export function fail(file: string, key: string, message: string): never {
  throw new LiError("invalid_input", `${file}: ${key}: ${message}`, { file, key });
}

/** A mapping with only the `allowed` keys. */
export function closed(file: string, key: string, obj: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (!isObject(obj)) fail(file, key, `expected a mapping, got ${JSON.stringify(obj)}`);
  for (const k of Object.keys(obj))
    if (!allowed.includes(k)) fail(file, `${key ? key + "." : ""}${k}`, `unknown key; known keys here: ${allowed.join(", ")}`);
  return obj;
}

export function number(file: string, key: string, v: unknown, min: number, max: number, integer: boolean): number {
  if (typeof v !== "number" || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max)
    fail(file, key, `expected ${integer ? "an integer" : "a number"} from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return v;
}

/** An absolute http(s) URL, normalised. */
export function httpUrl(file: string, key: string, v: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof v === "string" ? new URL(v) : undefined;
  } catch {}
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) fail(file, key, `expected an http(s) URL, got ${JSON.stringify(v)}`);
  return url.href;
}
