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

export interface GatewayPlan {
  api: Api;
  upstream: URL;
  key: GatewayKey | null;
  /** Points `env` at the gateway reached at `base` (the prefix included), the real key replaced. */
  apply(env: NodeJS.ProcessEnv, base: string): void;
}

export type PlanResult = { plan: GatewayPlan } | { unmetered: string } | { invalid: string };

function url(text: string, what: string): URL | string {
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
    default:
      return { unmetered: `li's gateway does not meter ${provider} yet` };
  }
}
