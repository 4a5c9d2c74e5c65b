/*
 * The hosts a provider needs, admitted by the sandbox's proxy: the API endpoint its CLI calls,
 * from the base-URL variable it reads when set (a named endpoint sets it too), else its default.
 * Anything else a run reaches is listed in sandbox.allow_hosts.
 */

const DEFAULTS: Record<string, { vars: string[]; hosts: string[] }> = {
  claude: { vars: ["ANTHROPIC_BASE_URL"], hosts: ["api.anthropic.com"] },
  codex: { vars: ["OPENAI_BASE_URL"], hosts: ["api.openai.com", "chatgpt.com"] },
  gemini: { vars: ["GOOGLE_GEMINI_BASE_URL"], hosts: ["generativelanguage.googleapis.com", "oauth2.googleapis.com"] },
  openai: { vars: ["LI_OPENAI_BASE_URL"], hosts: [] },
};

/** `host:port` of a URL, its default port filled in. */
function authority(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? 443 : 80)}`;
  } catch {
    return null;
  }
}

export function providerHosts(provider: string, env: NodeJS.ProcessEnv): string[] {
  const d = DEFAULTS[provider];
  if (!d) return [];
  const named = d.vars.map((v) => env[v]).filter((v): v is string => !!v).map(authority).filter((a): a is string => !!a);
  return named.length ? named : d.hosts;
}
