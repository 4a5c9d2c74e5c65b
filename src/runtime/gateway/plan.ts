import fs from "node:fs";
import { loadSettings } from "../../config/settings.js";
import { crypto } from "../../packages.js";
import type { GatewayKey } from "./server.js";
import type { Api } from "./usage-readers.js";

/*
 * How one provider is pointed at the gateway (docs/gateway.md): the upstream it would have called
 * (the base URL the user set, else the provider's default, over TLS), the key li holds for it
 * (from the environment, which includes li's settings' endpoint key), and what its environment
 * gets instead: the gateway's URL and a placeholder key. A provider with no plan here, or a login
 * that is not a key li can hold and whose endpoint cannot be redirected, runs as before, its usage
 * its own stream's word (`usage_source: stream`).
 */

/** The gateway's port on the sandbox's own loopback (beside the proxy's 3128). */
export const GATEWAY_PORT = 3129;

export const PLACEHOLDER = "li-gateway-placeholder-key";
const SHARED_PLACEHOLDER = PLACEHOLDER;

export interface GatewayPlan {
  api: Api;
  upstream: URL;
  key: GatewayKey | null;
  /** Points `env` at the gateway reached at `base` (the prefix included), the real key replaced. */
  apply(env: NodeJS.ProcessEnv, base: string): void;
  /** Arguments the provider takes after its subcommand (argv[1]) to call the gateway at `base` (codex's config). */
  args?(base: string): string[];
}

/** `unmetered` runs as before, its usage its stream's word (`source`: `stream`, or a declared agent's own, `agent`). */
export type PlanResult = { plan: GatewayPlan } | { unmetered: string; source?: "stream" | "agent" } | { invalid: string };

export function url(text: string, what: string): URL | string {
  try {
    const u = new URL(text);
    if (u.protocol === "http:" || u.protocol === "https:") return u;
  } catch {}
  return `${what} ${JSON.stringify(text)} is not an http(s) URL`;
}

/** A plan from a base-URL variable and the key variables (first set wins). */
function fromEnv(env: NodeJS.ProcessEnv, api: Api, baseVar: string, fallback: string, keys: { name: string; header: GatewayKey["header"] }[], needKey: string | null): PlanResult {
  const upstream = url(env[baseVar] || fallback, baseVar);
  if (typeof upstream === "string") return { invalid: upstream };
  const held = keys.find((k) => env[k.name]);
  if (!held && needKey) return { unmetered: needKey };
  return {
    plan: {
      api,
      upstream,
      key: held ? { header: held.header, real: env[held.name]!, placeholder: PLACEHOLDER } : null,
      apply(e, base) {
        e[baseVar] = base;
        if (held) e[held.name] = PLACEHOLDER;
      },
    },
  };
}

/** The plan for `provider`'s run with environment `env` (the provider's own, launch variables included). */
export function gatewayPlan(provider: string, env: NodeJS.ProcessEnv): PlanResult {
  switch (provider) {
    case "claude":
      // A login that is not a key (claude's OAuth) is sent as claude sends it, and still metered.
      return fromEnv(env, "anthropic", "ANTHROPIC_BASE_URL", "https://api.anthropic.com", [
        { name: "ANTHROPIC_API_KEY", header: "x-api-key" },
        { name: "ANTHROPIC_AUTH_TOKEN", header: "authorization" },
      ], null);
    case "openai": {
      const keyEnv = env.LI_OPENAI_KEY_ENV;
      return fromEnv(env, "openai", "LI_OPENAI_BASE_URL", "https://api.openai.com/v1", keyEnv ? [{ name: keyEnv, header: "authorization" }] : [], null);
    }
    case "codex":
      return codexPlan(env);
    case "gemini":
      // Code Assist (a Google login) and Vertex go to endpoints GOOGLE_GEMINI_BASE_URL does not move.
      if (env.GOOGLE_GENAI_USE_VERTEXAI === "true" || env.GOOGLE_GENAI_USE_VERTEXAI === "1") return { unmetered: "gemini on Vertex AI calls an endpoint li does not redirect" };
      return fromEnv(env, "gemini", "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com", [
        { name: "GEMINI_API_KEY", header: "x-goog-api-key" },
        { name: "GOOGLE_API_KEY", header: "x-goog-api-key" },
      ], "gemini without GEMINI_API_KEY logs in with Google (Code Assist), whose endpoint li does not redirect");
    default:
      return { unmetered: `li's gateway does not meter ${provider} runs` };
  }
}

/** Each provider's key variables, as its plan reads them. */
const KEY_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];

/**
 * The variables of `env` that hold a model API key li's gateway holds for some run: each
 * provider's, the one codex's config.toml names, li's openai provider's, and `named` (the
 * endpoints' api_key_env). What runs the agent's code outside its provider's sandbox (a check) gets
 * none of them: its output is the run's to read.
 */
export function modelKeyVars(env: NodeJS.ProcessEnv, named: string[] = []): string[] {
  let codex: string | null = null;
  try {
    codex = codexConfigProvider(fs.readFileSync(`${env.CODEX_HOME || `${env.HOME ?? ""}/.codex`}/config.toml`, "utf8"))?.env_key ?? null;
  } catch {}
  const all = [...KEY_VARS, ...named, codex, env.LI_OPENAI_KEY_ENV, "LI_GATEWAY_KEY"];
  return [...new Set(all.filter((k): k is string => !!k && env[k] !== undefined))];
}

/**
 * The key variables `provider`'s own plan reads (its own key, a placeholder once the gateway holds
 * it), or null for a provider li has no plan for (an ACP agent, a mock), whose environment is
 * left as it is: what a run may keep of modelKeyVars.
 */
export function ownKeyVars(provider: string, env: NodeJS.ProcessEnv): string[] | null {
  switch (provider) {
    case "claude":
      return ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"];
    case "gemini":
      return ["GEMINI_API_KEY", "GOOGLE_API_KEY"];
    case "openai":
      return env.LI_OPENAI_KEY_ENV ? [env.LI_OPENAI_KEY_ENV] : [];
    case "codex": {
      let chosen: string | null = null;
      try {
        chosen = codexConfigProvider(fs.readFileSync(`${env.CODEX_HOME || `${env.HOME ?? ""}/.codex`}/config.toml`, "utf8"))?.env_key ?? null;
      } catch {}
      return ["OPENAI_API_KEY", "CODEX_API_KEY", "LI_GATEWAY_KEY", ...(chosen ? [chosen] : [])];
    }
    default:
      return null;
  }
}

/** The variables the settings' endpoints (of `dir`) read their keys from; none when the settings cannot be read. */
export function endpointKeyVars(dir: string): string[] {
  try {
    return loadSettings(dir).endpoints.map((p) => p.api_key_env).filter((k): k is string => !!k);
  } catch {
    return [];
  }
}

/** The provider codex's config.toml selects, and that provider's table (a minimal read: top-level keys and one table). */
export function codexConfigProvider(toml: string): { name: string; base_url: string | null; env_key: string | null } | null {
  let table = "";
  let name: string | null = null;
  const tables = new Map<string, Record<string, string>>();
  for (const raw of toml.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "").trim();
    const head = /^\[([^\]]+)\]$/.exec(line);
    if (head) {
      table = head[1].trim();
      continue;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*"((?:[^"\\]|\\.)*)"$/.exec(line);
    if (!kv) continue;
    if (!table && kv[1] === "model_provider") name = kv[2];
    else if (table) tables.set(table, { ...tables.get(table), [kv[1]]: kv[2] });
  }
  if (!name) return null;
  const t = tables.get(`model_providers.${name}`) ?? tables.get(`model_providers."${name}"`) ?? {};
  return { name, base_url: t.base_url ?? null, env_key: t.env_key ?? null };
}

/**
 * codex: a plain OPENAI_BASE_URL does not move every call (its built-in provider may use a
 * websocket, and a provider of config.toml has its own base_url). li gives the provider's base_url
 * itself with `-c`: the one config.toml selects, or, for the built-in openai provider with a key in
 * the environment, a provider of li's own over HTTP. A ChatGPT login (no key in the environment) is
 * codex's own and is not metered.
 */
function codexPlan(env: NodeJS.ProcessEnv): PlanResult {
  // The gateway's URL (its secret with it) is on codex's command line, which any local user can
  // read: the key placeholder, in its environment only, is the run's own, so only it gets the real key.
  const PLACEHOLDER = `${SHARED_PLACEHOLDER}-${crypto().randomBytes(24).toString("hex")}`;
  const home = env.CODEX_HOME || `${env.HOME ?? ""}/.codex`;
  let chosen: ReturnType<typeof codexConfigProvider> = null;
  try {
    chosen = codexConfigProvider(fs.readFileSync(`${home}/config.toml`, "utf8"));
  } catch {}
  if (chosen && chosen.name !== "openai") {
    if (!chosen.base_url) return { unmetered: `codex's provider ${chosen.name} names no base_url li can find in config.toml` };
    const upstream = url(chosen.base_url, `codex's model_providers.${chosen.name}.base_url`);
    if (typeof upstream === "string") return { invalid: upstream };
    const keyName = chosen.env_key && env[chosen.env_key] ? chosen.env_key : null;
    const key = keyName ? { header: "authorization" as const, real: env[keyName]!, placeholder: PLACEHOLDER } : null;
    const id = /^[A-Za-z0-9_-]+$/.test(chosen.name) ? chosen.name : JSON.stringify(chosen.name);
    return {
      plan: {
        api: "openai",
        upstream,
        key,
        apply(e) {
          if (keyName) e[keyName] = PLACEHOLDER;
        },
        args: (base) => ["-c", `model_providers.${id}.base_url=${JSON.stringify(base)}`],
      },
    };
  }
  const keyName = ["OPENAI_API_KEY", "CODEX_API_KEY"].find((k) => env[k]);
  if (!keyName) return { unmetered: "codex without OPENAI_API_KEY uses its own login (ChatGPT), whose endpoint li does not redirect" };
  const upstream = url(env.OPENAI_BASE_URL || "https://api.openai.com/v1", "OPENAI_BASE_URL");
  if (typeof upstream === "string") return { invalid: upstream };
  return {
    plan: {
      api: "openai",
      upstream,
      key: { header: "authorization", real: env[keyName]!, placeholder: PLACEHOLDER },
      apply(e) {
        e[keyName] = PLACEHOLDER;
        e.LI_GATEWAY_KEY = PLACEHOLDER;
      },
      args: (base) => [
        "-c",
        'model_provider="li_gateway"',
        "-c",
        `model_providers.li_gateway={name="li gateway", base_url=${JSON.stringify(base)}, wire_api="responses", env_key="LI_GATEWAY_KEY", supports_websockets=false}`,
      ],
    },
  };
}
