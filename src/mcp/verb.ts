import type { Command } from "../cli/commander.js";
import { tsyringe } from "../packages.js";
import { categoryOf, type Category, type Effect } from "./effects.js";

export type { Category };
export type JsonSchema = Record<string, any>;

/** Plain data every verb declares; the dispatcher reads only this and the hooks below. */
export interface VerbMeta {
  /** Namespaced id, e.g. `noun.action`. */
  id: string;
  /** What the verb does (the policy key); the category is derived from it. */
  effects: Effect[];
  /** Derived from `effects` by the decorator; a declared one must agree. */
  category: Category;
  requiresFingerprint: boolean;
  /** The li command the verb runs, e.g. ["job", "wait"]. Its schema is projected from it. */
  cliPath: string[];
  summary: string;
  /** Server-owned flags always rendered and never in the schema (e.g. --detach on spawns). */
  fixedFlags?: string[];
  /**
   * CLI flags for a person at a terminal (a live view, a stream until a job ends) that a
   * verb never offers: left out of the schema and never rendered, so a call cannot hold an op
   * open on them.
   */
  terminalFlags?: string[];
  /** Retired v1 names: resolved to this verb before `retiresOn`, answered retired_verb after. */
  synonyms?: { name: string; retiresOn: string }[];
  /** The machine-result decoder: `data` must satisfy this schema. */
  result: JsonSchema;
  /** Keys targeted help takes beside "verb" (e.g. "playbook"); any other key is refused. */
  helpKeys?: string[];
  /** A sentence targeted help adds beside the schema (e.g. that a second help stage exists). */
  note?: string;
  /** Seconds the CLI may take (default 30). */
  timeoutSeconds?: number;
  /**
   * A text argument that may outgrow one argv element: when the joined value is too long it
   * travels as a snapshotted file through `option` instead (never truncated, never an error).
   */
  spill?: { arg: string; option: string; join: string };
  /**
   * A fingerprint of an artifact the verb resolves at run time (a playbook file), carried on the
   * op as `key` beside schema_fingerprint and rendered as `flag=value`, so the CLI can say in the
   * result when the artifact changed after help. Its current value is `extra[key]` of the context.
   */
  artifactFingerprint?: { key: string; flag: string };
  /**
   * Arguments naming a directory the command works in or changes (a spawn's `cwd`): when the
   * client declares roots, each must lie within them, and so must the value of `flag` inside a
   * word-array argument (`inWords`: a schedule's action words, `--cwd DIR`). The dispatcher checks.
   */
  withinRoots?: { args: string[]; inWords?: { arg: string; flag: string }[] };
}

/** Optional per-verb semantics the dispatcher calls generically. */
export interface Verb {
  /** The command whose projection validates `args` (two-stage schemas, e.g. playbook args). */
  command?(args: Record<string, unknown>, base: Command): Promise<CommandContext>;
  /** Effective CLI timeout for these args. */
  timeoutSeconds?(args: Record<string, unknown>): number;
  /** The args fitted to the seconds left of the call's budget (e.g. a wait window clamped to it). */
  fitBudget?(args: Record<string, unknown>, remainingSeconds: number, schema: JsonSchema): Record<string, unknown>;
  /** Turns decoded `data` into the op result, with what `command` resolved. */
  transform?(data: any, args: Record<string, unknown>, context: CommandContext | undefined): unknown;
  /** Targeted help beyond a verb id (e.g. {verb, playbook}). */
  help?(target: Record<string, unknown>, base: Command): Promise<CommandContext>;
}

/** A resolved command plus anything the verb wants to carry from resolution to its result. */
export interface CommandContext {
  command: Command;
  extra?: Record<string, unknown>;
}

export const VERB_META = Symbol.for("li.verb.meta");

/** Marks a class as a verb: records its metadata and makes it constructible by the container. */
export function verb(declared: Omit<VerbMeta, "category"> & { category?: Category }) {
  const category = categoryOf(declared.effects);
  if (declared.category !== undefined && declared.category !== category)
    throw new Error(`verb ${declared.id} declares category ${declared.category}, but its effects (${declared.effects.join(", ") || "none"}) make it ${category}`);
  const meta: VerbMeta = { ...declared, category };
  return (target: new (...args: any[]) => Verb): void => {
    tsyringe().injectable()(target);
    Reflect.defineMetadata(VERB_META, meta, target);
  };
}

export function verbMeta(target: Function): VerbMeta | undefined {
  return Reflect.getMetadata(VERB_META, target);
}
