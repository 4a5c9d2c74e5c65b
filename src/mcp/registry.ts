import type { DependencyContainer } from "tsyringe";
import { tsyringe } from "../packages.js";
import { isFenced } from "./fence.js";
import { verbMeta, type Verb, type VerbMeta } from "./verb.js";

/** A CLI command that is deliberately not a verb, and why. */
export interface Declined {
  cliPath: string[];
  reason: string;
}

/** The id a CLI path would have as a verb: its words joined with dots. */
export const idOfPath = (cliPath: readonly string[]) => cliPath.join(".");

export type Lookup =
  | { kind: "verb"; meta: VerbMeta; via?: string }
  | { kind: "declined"; id: string; reason: string }
  | { kind: "retired"; name: string; replacement: string; retiredOn: string }
  | { kind: "unknown" };

/**
 * The allowlist: a verb is reachable only when registered here. Metadata is read up front;
 * an instance is built by the container only when the verb is dispatched.
 */
export class VerbRegistry {
  private readonly metas = new Map<string, VerbMeta>();
  private readonly synonyms = new Map<string, { target: string; retiresOn: string }>();
  private readonly declined = new Map<string, Declined>();

  constructor(private readonly di: DependencyContainer = tsyringe().container.createChildContainer()) {}

  register(cls: new (...args: any[]) => Verb): this {
    const meta = verbMeta(cls);
    if (!meta) throw new Error(`${cls.name} has no @verb metadata`);
    if (this.metas.has(meta.id) || this.synonyms.has(meta.id) || this.declined.has(meta.id)) throw new Error(`verb ${meta.id} is registered twice (or also declined)`);
    if (isFenced(meta.cliPath)) throw new Error(`verb ${meta.id} runs the fenced path "${meta.cliPath.join(" ")}", which MCP may never reach`);
    for (const s of meta.synonyms ?? []) {
      if (this.metas.has(s.name) || this.synonyms.has(s.name)) throw new Error(`synonym ${s.name} of ${meta.id} is registered twice`);
      this.synonyms.set(s.name, { target: meta.id, retiresOn: s.retiresOn });
    }
    this.metas.set(meta.id, meta);
    this.di.register(meta.id, { useClass: cls });
    return this;
  }

  /** Records a CLI command that is not offered, with its reason; a verb of that id cannot also exist. */
  decline(d: Declined): this {
    const id = idOfPath(d.cliPath);
    if (this.metas.has(id) || this.declined.has(id)) throw new Error(`${id} is both declined and registered, or declined twice`);
    this.declined.set(id, d);
    return this;
  }

  /** The declined CLI commands, with their reasons. */
  declinedAll(): Declined[] {
    return [...this.declined.values()];
  }

  /** Verbs in registration order; synonyms are never listed. */
  all(): VerbMeta[] {
    return [...this.metas.values()];
  }

  get(id: string): VerbMeta | undefined {
    return this.metas.get(id);
  }

  /** The v1 synonyms, with their verb and retirement date. */
  synonymsAll(): { name: string; target: string; retiresOn: string }[] {
    return [...this.synonyms.entries()].map(([name, s]) => ({ name, ...s }));
  }

  /** Every name a caller may mean: verbs and declined commands (for "did you mean"). */
  names(): string[] {
    return [...this.metas.keys(), ...this.declined.keys()];
  }

  /** Resolves an op name; a synonym works until the end of the day before its retirement date. */
  lookup(name: string, now: Date = new Date()): Lookup {
    const meta = this.metas.get(name);
    if (meta) return { kind: "verb", meta };
    const declined = this.declined.get(name);
    if (declined) return { kind: "declined", id: name, reason: declined.reason };
    const syn = this.synonyms.get(name);
    if (!syn) return { kind: "unknown" };
    if (now.toISOString().slice(0, 10) >= syn.retiresOn) return { kind: "retired", name, replacement: syn.target, retiredOn: syn.retiresOn };
    return { kind: "verb", meta: this.metas.get(syn.target)!, via: name };
  }

  instance(id: string): Verb {
    return this.di.resolve<Verb>(id);
  }
}
