import { entryScript } from "../../entrypoints.js";
import { loadSettings, type Handler } from "../../config/settings.js";
import type { Entity, Store, TerminalHook } from "../store.js";
import { budgetEnvelope, terminalEnvelope } from "./envelope.js";
import { insertDelivery, type Target } from "./outbox.js";
import { startLiProcess } from "../store-handoff.js";

/*
 * The terminal hook openStore (lifecycle/open.ts) installs. Settings are read, and yaml loaded, only when a
 * terminal transition actually happens.
 */

const warned = new Set<string>();
/** The target of a delivery recorded failed at once: there is no handler to run. */
const NONE: Target = { type: "none", timeout_seconds: 0, backoff_seconds: 0 };

/** Handler names chosen with --notify for this entity itself: a flow's choice fires when the flow ends, not per step. */
function selectedNames(entity: Entity): Set<string> {
  return new Set((Array.isArray(entity.spec?.notify) ? entity.spec.notify : []).filter((n: unknown): n is string => typeof n === "string"));
}

/**
 * The directory whose project settings applied when the entity (or its nearest ancestor)
 * was submitted, so a kill or reap run elsewhere still notifies the submitter's handlers.
 */
async function settingsDir(store: Store, entity: Entity): Promise<string | undefined> {
  for (let e: Entity | undefined = entity, depth = 0; e && depth < 32; depth++) {
    if (typeof e.spec?.settings_dir === "string") return e.spec.settings_dir;
    e = e.parent_id ? await store.get(e.parent_id) : undefined;
  }
  return undefined;
}

/** A handler without kinds gets every entity's end, and no budget.threshold: that one is only for handlers that name it. */
function matches(h: Handler, entity: Entity, selected: Set<string>): boolean {
  if (h.kinds && !h.kinds.includes(entity.kind)) return false;
  return h.scope === "all" || selected.has(h.name);
}

export function targetOf(h: Handler): Target {
  const common = { timeout_seconds: h.timeout_seconds, backoff_seconds: h.retry.backoff_seconds, source: h.source, file: h.file };
  return h.exec ? { type: "exec", argv: h.exec, cwd: h.cwd, ...common } : { type: "webhook", url: h.url!, ...common };
}

function warn(text: string): void {
  if (warned.has(text)) return;
  warned.add(text);
  try {
    process.stderr.write(text + "\n");
  } catch {}
}

export const notifyHook: TerminalHook = {
  /** Never throws: a broken settings file must not block a run from ending. It is recorded as failed deliveries instead. */
  async enqueue(store, entity, from, eventId) {
    const selected = selectedNames(entity);
    const payload = JSON.stringify(terminalEnvelope(entity, from, eventId));
    const base = { event_id: eventId, entity_id: entity.id, payload };
    let handlers: Handler[];
    try {
      const settings = loadSettings(await settingsDir(store, entity));
      settings.warnings.forEach(warn);
      handlers = settings.handlers;
    } catch (err: any) {
      const error = `settings could not be loaded when ${entity.id} ended: ${err?.message ?? err}`;
      warn(`li: ${error}`);
      for (const name of selected.size ? selected : ["(settings)"]) await insertDelivery(store, { ...base, handler: name, target: NONE, max_attempts: 1, failed: error });
      return 0;
    }
    let pending = 0;
    for (const h of handlers) {
      if (!matches(h, entity, selected)) continue;
      await insertDelivery(store, { ...base, handler: h.name, target: targetOf(h), max_attempts: h.retry.max_attempts });
      pending++;
    }
    // A handler asked for by name that is gone (or now untrusted) is a visible failure, not silence.
    for (const name of selected) {
      if (handlers.some((h) => h.name === name)) continue;
      await insertDelivery(store, { ...base, handler: name, target: NONE, max_attempts: 1, failed: `handler ${name} is not configured (or its settings file is not trusted) when ${entity.id} ended` });
    }
    return pending;
  },
  /**
   * A budget alert (budgets/thresholds.ts) for every handler whose kinds name budget.threshold,
   * whatever its scope: a budget is no one run's to select, and the alert fires only once. The
   * handlers are those in force for the run whose spend crossed (the user's settings, and its
   * project's once trusted), as for that run's own end. Never throws, as `enqueue`.
   */
  async enqueueBudget(store, alert) {
    const entity = await store.get(alert.entity_id);
    // The budget_events row stays: a run cleaned away mid-write has no deliveries to hang them on.
    if (!entity) return 0;
    const payload = JSON.stringify(budgetEnvelope(alert, entity.kind));
    const base = { event_id: null, budget_event_id: alert.id, entity_id: entity.id, payload };
    let handlers: Handler[];
    try {
      const settings = loadSettings(await settingsDir(store, entity));
      settings.warnings.forEach(warn);
      handlers = settings.handlers.filter((h) => h.kinds?.includes("budget.threshold"));
    } catch (err: any) {
      const error = `settings could not be loaded when budget ${alert.budget.name} crossed ${alert.level * 100}%: ${err?.message ?? err}`;
      warn(`li: ${error}`);
      await insertDelivery(store, { ...base, handler: "(settings)", target: NONE, max_attempts: 1, failed: error });
      return 0;
    }
    for (const h of handlers) await insertDelivery(store, { ...base, handler: h.name, target: targetOf(h), max_attempts: h.retry.max_attempts });
    return handlers.length;
  },
  afterCommit() {
    startDrainer();
  },
};

/**
 * A detached drainer in its own session; several at once are safe, each claims rows by
 * compare-and-set. Never throws: rows left pending are picked up by the next drainer or retry.
 */
export function startDrainer(): boolean {
  try {
    const child = startLiProcess(entryScript("drain-main"), []);
    child.on("error", () => {});
    child.unref();
    return child.pid !== undefined;
  } catch {
    return false;
  }
}
