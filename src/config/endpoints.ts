import { isObject } from "../json.js";
import { NAME_PATTERN } from "../lifecycle/names.js";
import { closed, fail, httpUrl } from "./settings-fields.js";

/*
 * Named endpoints: where an openai run sends its prompt, and which environment variable's
 * value goes with it as the bearer token. Only settings define them (the user file, or a
 * project file once `li hooks trust` pinned it); a run can only name one. No command takes a
 * URL or an env var name, so no caller, an MCP client included, can have a secret of this
 * machine sent to a host of its choosing.
 */

export interface Endpoint {
  name: string;
  /** The chat-completions base URL, without a trailing slash. */
  base_url: string;
  /** The env var whose value is the key; null for an endpoint that takes none. */
  api_key_env: string | null;
  /** Whether a run is refused while api_key_env is unset. */
  key_required: boolean;
  source: "builtin" | "user" | "project";
  /** The settings file that defines it; null for the built-in one. */
  file: string | null;
}

export const BUILTIN_ENDPOINT = "openai";
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const ENDPOINT_EXAMPLE = 'e.g. endpoints: {local: {base_url: "http://127.0.0.1:8080/v1", api_key_env: LOCAL_KEY}}';

/** `openai`: OPENAI_BASE_URL, else the public API, with OPENAI_API_KEY; what someone who configured nothing gets. */
export function builtinEndpoint(): Endpoint {
  const custom = process.env.OPENAI_BASE_URL || undefined;
  return {
    name: BUILTIN_ENDPOINT,
    base_url: (custom ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, ""),
    api_key_env: "OPENAI_API_KEY",
    // A self-hosted server named by OPENAI_BASE_URL may need no key; the public API does.
    key_required: custom === undefined,
    source: "builtin",
    file: null,
  };
}

function endpoint(file: string, name: string, v: unknown, source: "user" | "project"): Endpoint {
  const key = `endpoints.${name}`;
  if (!NAME_PATTERN.test(name)) fail(file, key, 'an endpoint name is 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  if (name === BUILTIN_ENDPOINT)
    fail(file, key, `openai is the built-in endpoint (OPENAI_BASE_URL, else ${OPENAI_DEFAULT_BASE_URL}, with OPENAI_API_KEY); give yours another name and set default_endpoint to it`);
  const d = closed(file, key, v, ["base_url", "api_key_env"]);
  if (d.base_url === undefined) fail(file, `${key}.base_url`, 'required: the chat-completions base URL, e.g. "http://127.0.0.1:8080/v1"');
  const url = new URL(httpUrl(file, `${key}.base_url`, d.base_url));
  if (url.username || url.password) fail(file, `${key}.base_url`, "a base URL may not carry credentials; name the env var holding the key in api_key_env");
  if (url.search || url.hash) fail(file, `${key}.base_url`, "a base URL has no query or fragment: li appends /chat/completions to it");
  let env: string | null = null;
  if (d.api_key_env !== undefined) {
    if (typeof d.api_key_env !== "string" || !ENV_NAME.test(d.api_key_env))
      fail(file, `${key}.api_key_env`, `expected an environment variable name (letters, digits and _, not starting with a digit), got ${JSON.stringify(d.api_key_env)}; leave it out for an endpoint that takes no key`);
    env = d.api_key_env;
  }
  return { name, base_url: url.href.replace(/\/+$/, ""), api_key_env: env, key_required: env !== null, source, file };
}

/** The `endpoints` mapping of one file. */
export function parseEndpoints(file: string, v: unknown, source: "user" | "project"): Endpoint[] {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) fail(file, "endpoints", `expected a mapping of names to {base_url, api_key_env}, ${ENDPOINT_EXAMPLE}`);
  return Object.entries(v).map(([name, def]) => endpoint(file, name, def, source));
}

export function parseDefaultEndpoint(file: string, v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || !NAME_PATTERN.test(v)) fail(file, "default_endpoint", `expected the name of an endpoint, got ${JSON.stringify(v)}`);
  return v;
}

export interface EndpointsInForce {
  /** The built-in first, then each file's in order. */
  endpoints: Endpoint[];
  default_endpoint: string;
}

/**
 * The endpoints of the files in force (user first, then project). A later file's
 * default_endpoint wins, and may name an endpoint of an earlier file, never of a later one:
 * the user's default must not depend on which project li runs in.
 */
export function mergeEndpoints(files: { path: string; endpoints: Endpoint[]; default_endpoint: string | null }[]): EndpointsInForce {
  const endpoints = [builtinEndpoint()];
  let default_endpoint = BUILTIN_ENDPOINT;
  for (const f of files) {
    for (const e of f.endpoints) {
      const dup = endpoints.find((o) => o.name === e.name);
      if (dup) fail(f.path, `endpoints.${e.name}`, `also defined in ${dup.file}; endpoint names must be unique`);
      endpoints.push(e);
    }
    if (f.default_endpoint === null) continue;
    if (!endpoints.some((e) => e.name === f.default_endpoint))
      fail(f.path, "default_endpoint", `no endpoint named ${f.default_endpoint} (defined: ${endpoints.map((e) => e.name).join(", ")}); define it under endpoints, ${ENDPOINT_EXAMPLE}`);
    default_endpoint = f.default_endpoint;
  }
  return { endpoints, default_endpoint };
}
