import { policyRefusal, policyView, type Policy } from "../config/policy.js";
import { nearest } from "./near.js";
import { clip, clipQuoted, quoted } from "./echo.js";
import { idOfPath } from "./registry.js";
import type { Surface } from "./surface.js";
import type { JsonSchema, VerbMeta } from "./verb.js";

/** `verb(required, …) — summary`: enough to write the common call without a second round-trip. */
export function signature(meta: VerbMeta, schema: JsonSchema): string {
  const required: string[] = schema.required ?? [];
  // One-of groups are required in practice: `prompt | prompt_file`.
  const groups: string[][] = (schema.allOf ?? []).filter((c: any) => Array.isArray(c.anyOf)).map((c: any) => c.anyOf.map((b: any) => b.required[0]));
  const named = new Set([...required, ...groups.flat()]);
  const optional = Object.keys(schema.properties ?? {}).filter((k) => !named.has(k));
  const params = [...required, ...groups.map((g) => g.join(" | ")), ...(optional.length ? ["…"] : [])].join(", ");
  return `${meta.id}(${params}) — ${meta.summary}`;
}

/**
 * help=true: the catalog of reachable verbs, the registered ones this server cannot offer (with
 * why), and the names of the CLI commands that are not verbs. It is the first call a client makes,
 * so its size grows by as little as possible per verb: requires_fingerprint is listed only where
 * it is true, and a declined command's reason is one `help: "<command>"` away instead of inline.
 */
export async function catalog(surface: Surface, policy?: Policy) {
  const entries = [];
  const unavailable = [];
  for (const meta of surface.registry.all()) {
    const rule = policy ? policyRefusal(policy, meta) : null;
    if (rule) {
      unavailable.push({ verb: meta.id, reason: `refused by this server's policy (${rule})` });
      continue;
    }
    const p = await surface.projection(meta);
    if (!p.ok) {
      unavailable.push({ verb: meta.id, reason: p.reason });
      continue;
    }
    entries.push({ verb: meta.id, category: meta.category, ...(meta.requiresFingerprint ? { requires_fingerprint: true } : {}), signature: signature(meta, p.projection.schema) });
  }
  const declined = surface.registry.declinedAll().map((d) => idOfPath(d.cliPath));
  return { catalog: entries, unavailable, declined, ...(policy && policy.sources.length ? { policy: policyView(policy) } : {}) };
}

export function verbHelpBody(meta: VerbMeta, schema: JsonSchema, schemaFingerprint: string, extra: Record<string, unknown> = {}) {
  return {
    verb: meta.id,
    category: meta.category,
    requires_fingerprint: meta.requiresFingerprint,
    schema,
    schema_fingerprint: schemaFingerprint,
    ...(meta.note ? { note: meta.note } : {}),
    ...extra,
  };
}

export class HelpError extends Error {}

/** help="<verb>" or help={verb, …}: one verb's projected schema and fingerprint. */
export async function verbHelp(surface: Surface, target: string | Record<string, unknown>, policy?: Policy) {
  const id = typeof target === "string" ? target : target.verb;
  if (typeof id !== "string") throw new HelpError('help must be true, a verb id, or an object with a "verb" key');
  const found = surface.registry.lookup(id, surface.now());
  if (found.kind === "retired") throw new HelpError(`${id} was retired on ${found.retiredOn}; ask help for ${found.replacement}`);
  if (found.kind === "declined") return { verb: id, available: false, reason: found.reason };
  if (found.kind === "unknown") {
    const near = nearest(id, surface.registry.names());
    throw new HelpError(`no verb named ${JSON.stringify(clip(id))}${near.length ? `; did you mean ${near.join(" or ")}?` : ""} Call help=true for the catalog`);
  }
  const meta = found.meta;
  const rule = policy ? policyRefusal(policy, meta) : null;
  if (rule) return { verb: meta.id, available: false, reason: `refused by this server's policy (${rule})` };
  const extraKeys = typeof target === "object" ? Object.keys(target).filter((k) => k !== "verb") : [];
  const unknown = extraKeys.filter((k) => !(meta.helpKeys ?? []).includes(k));
  if (unknown.length)
    throw new HelpError(`help for ${meta.id} takes ${["verb", ...(meta.helpKeys ?? [])].map((k) => JSON.stringify(k)).join(" and ")}; unknown key ${quoted(unknown)}`);
  if (extraKeys.length) {
    const v = surface.registry.instance(meta.id);
    if (!v.help) throw new HelpError(`${meta.id} takes no help target beyond its name (got ${quoted(extraKeys)})`);
    let ctx, p;
    try {
      ctx = await v.help(target as Record<string, unknown>, await surface.command(meta));
      p = surface.projectCommand(meta, ctx.command);
    } catch (err: any) {
      // A verb's own refusal may quote the target (a playbook name), so it is bounded like any echo.
      throw new HelpError(clipQuoted(String(err?.message ?? err), target));
    }
    return verbHelpBody(meta, p.projection.schema, p.fingerprint, ctx.extra);
  }
  const p = await surface.projection(meta);
  if (!p.ok) throw new HelpError(`${meta.id} is unavailable: ${p.reason}`);
  return verbHelpBody(meta, p.projection.schema, p.fingerprint);
}
