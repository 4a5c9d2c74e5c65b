/*
 * Which change to a provider's credential file is a token refresh (docs/sandbox.md#provider-state).
 * The run's private copy is written back to the person's file when the run ends, and the agent
 * inside can write that copy: a write-back that took any JSON would let it log the person out
 * (an emptied refresh token) or swap in another account's login. So the rule is an allow-list
 * per file, from each CLI's real format (read in the pinned CLIs):
 *
 * - claude `.credentials.json`: `{claudeAiOauth: {accessToken, refreshToken, expiresAt,
 *   refreshTokenExpiresAt, scopes, subscriptionType, subscriptionTypeSource,
 *   subscriptionTypeVerifiedAt, rateLimitTier, clientId, accountUuid, organizationUuid}, mcpOAuth:
 *   {<server>: {accessToken, refreshToken, expiresAt, …}}, organizationUuid, …}`. claude's refresh
 *   writes new tokens and the plan the server reports with them; the account (`accountUuid`,
 *   `organizationUuid`, `clientId`, `scopes`) stays.
 * - codex `auth.json`: `{auth_mode, OPENAI_API_KEY, tokens: {id_token, access_token, refresh_token,
 *   account_id}, last_refresh}`; the id_token is a JWT whose claims name the account.
 * - gemini `oauth_creds.json` (google-auth-library's credentials): `{access_token, refresh_token,
 *   scope, token_type, id_token, expiry_date}`, the id_token's claims naming the Google account;
 *   `mcp-oauth-tokens.json`: `[{serverName, token: {accessToken, refreshToken, tokenType, scope,
 *   expiresAt}, clientId, tokenUrl, mcpServerUrl, updatedAt}]`; `google_accounts.json` (`{active,
 *   old}`) is who is logged in, not a token: any change to it is refused.
 *
 * A change passes only when the file is a regular JSON document under MAX_CREDENTIAL_BYTES whose
 * every field outside the file's token fields is as it was (same keys, same values, same array
 * lengths), whose refresh tokens are still non-empty strings, and whose id_token (when the old one
 * named an account) names the same account. The tokens themselves are opaque to li: a swap that
 * keeps every identifying field as it was (claude's tokens carry no account li can read) is not
 * seen; one that changes any is refused.
 */

/** A credential file larger than this is not a refresh: each CLI's is a few KB. */
export const MAX_CREDENTIAL_BYTES = 256 * 1024;

/** Deeper than any CLI's format: a document nested past it is refused, never walked. */
const MAX_DEPTH = 16;

/** The fields each file's refresh may change (by key name, at any depth); the rest must stay. */
const TOKEN_FIELDS: Record<string, string[]> = {
  ".credentials.json": ["accessToken", "refreshToken", "expiresAt", "refreshTokenExpiresAt", "subscriptionType", "subscriptionTypeSource", "subscriptionTypeVerifiedAt", "rateLimitTier"],
  "auth.json": ["id_token", "access_token", "refresh_token", "last_refresh"],
  "oauth_creds.json": ["access_token", "refresh_token", "id_token", "expiry_date"],
  "mcp-oauth-tokens.json": ["accessToken", "refreshToken", "expiresAt", "updatedAt"],
  "google_accounts.json": [],
};
const REFRESH_FIELDS = new Set(["refreshToken", "refresh_token"]);
/** The id_token claims that name an account (codex's ChatGPT account is under its auth claim). */
const ID_CLAIMS = ["sub", "email", "iss", "aud"];
const OPENAI_AUTH = "https://api.openai.com/auth";
const OPENAI_IDS = ["chatgpt_account_id", "chatgpt_user_id", "user_id"];

export type RefreshVerdict = { ok: true } | { ok: false; reason: "too_large" | "not_json" | "account_changed" | "not_a_refresh" | "token_removed"; detail: string };

const plain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The claims of a JWT, or null when it is not one li can read. */
function claims(jwt: unknown): Record<string, unknown> | null {
  if (typeof jwt !== "string") return null;
  const part = jwt.split(".")[1];
  if (!part) return null;
  try {
    const c = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return plain(c) ? c : null;
  } catch {
    return null;
  }
}

/** The identifying claims of an id_token, as a comparable value. */
function identity(jwt: unknown): unknown[] | null {
  const c = claims(jwt);
  if (!c) return null;
  const auth = plain(c[OPENAI_AUTH]) ? (c[OPENAI_AUTH] as Record<string, unknown>) : {};
  return [...ID_CLAIMS.map((k) => c[k]), ...OPENAI_IDS.map((k) => auth[k])];
}

/** Why `after` is not `before` with only token fields refreshed, or null when it is. */
function diff(before: unknown, after: unknown, tokens: Set<string>, at: string, depth: number): Extract<RefreshVerdict, { ok: false }> | null {
  if (depth > MAX_DEPTH) return { ok: false, reason: "not_a_refresh", detail: `nested deeper than ${MAX_DEPTH} at ${at || "the top"}` };
  if (plain(before) && plain(after)) {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const where = at ? `${at}.${k}` : k;
      const [b, a] = [before[k], after[k]];
      if (tokens.has(k)) {
        if (b !== undefined && a === undefined) return { ok: false, reason: "token_removed", detail: `${where} was removed` };
        if (a !== undefined && typeof a !== "string" && typeof a !== "number" && a !== null) return { ok: false, reason: "not_a_refresh", detail: `${where} is not a string or a number` };
        if (REFRESH_FIELDS.has(k) && typeof b === "string" && b !== "" && (typeof a !== "string" || a === "")) return { ok: false, reason: "token_removed", detail: `${where} was emptied` };
        if (k === "id_token" && b !== a) {
          const [ib, ia] = [identity(b), identity(a)];
          if (ib && !same(ib, ia)) return { ok: false, reason: "account_changed", detail: `${where} names another account` };
        }
        continue;
      }
      if (!(k in before)) return { ok: false, reason: "not_a_refresh", detail: `${where} was added` };
      if (!(k in after)) return { ok: false, reason: "not_a_refresh", detail: `${where} was removed` };
      const bad = diff(b, a, tokens, where, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length) return { ok: false, reason: "not_a_refresh", detail: `${at || "the list"} has ${after.length} entries, not ${before.length}` };
    for (let i = 0; i < before.length; i++) {
      const bad = diff(before[i], after[i], tokens, `${at}[${i}]`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (same(before, after)) return null;
  // An identifying field (an account id, a client id, the scopes, a server's name) that changed.
  return { ok: false, reason: /account|uuid|client|email|sub$|serverName|active/i.test(at) ? "account_changed" : "not_a_refresh", detail: `${at || "the document"} changed` };
}

/** Whether the bytes `after` of the credential file named `name` are `before` refreshed. */
export function judgeRefresh(name: string, before: Buffer, after: Buffer): RefreshVerdict {
  if (after.length > MAX_CREDENTIAL_BYTES) return { ok: false, reason: "too_large", detail: `more than ${MAX_CREDENTIAL_BYTES} bytes` };
  const fields = TOKEN_FIELDS[name];
  if (!fields) return { ok: false, reason: "not_a_refresh", detail: `li knows no token fields of ${name}` };
  let b: unknown;
  let a: unknown;
  try {
    b = JSON.parse(before.toString("utf8"));
  } catch {
    return { ok: false, reason: "not_json", detail: "the person's file was not JSON when the run began" };
  }
  try {
    a = JSON.parse(after.toString("utf8"));
  } catch (err) {
    return { ok: false, reason: "not_json", detail: (err as Error).message };
  }
  if (!plain(a) && !Array.isArray(a)) return { ok: false, reason: "not_json", detail: "not a JSON object or list" };
  try {
    return diff(b, a, new Set(fields), "", 0) ?? { ok: true };
  } catch (err) {
    // A document too deep for the comparison itself (a stack overflow in JSON.stringify).
    return { ok: false, reason: "not_a_refresh", detail: (err as Error).message };
  }
}
