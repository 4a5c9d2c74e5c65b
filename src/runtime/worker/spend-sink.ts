import { userPrices } from "../../config/user-prices.js";
import { priceOf, tokensOf, usdOf } from "../../lifecycle/budgets/prices.js";
import { chargedFigures, crossed, recordSpend, rootOf } from "../../lifecycle/budgets/spend.js";
import { allowancesOf, claimHeld, fits, lookAtBudgets, releaseClaims, type Allowance } from "../../lifecycle/budgets/allowance.js";
import { hostName } from "../../lifecycle/locate.js";
import type { Figures } from "../../lifecycle/budgets/figures.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import type { Usage } from "../../lifecycle/usage.js";
import { persist } from "./persist.js";
import { errorText, type WorkerLog } from "./worker-log.js";

/** How often a worker writes its run's live spend and looks at its budgets (LI_SPEND_FLUSH_MS overrides, for tests). */
export function flushMs(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.LI_SPEND_FLUSH_MS);
  return Number.isFinite(ms) && ms >= 50 ? ms : 2000;
}

const same = (a: Usage | null, b: Usage | null) => JSON.stringify(a) === JSON.stringify(b);

/** What decides a gateway call: null (it starts), a budget the store says is spent, or the store could not say. */
export type CallVerdict = null | { spent: Figures } | { error: string };

/**
 * The one sink of a run's live usage (issue 31): every few seconds the worker writes what the
 * provider's stream reported so far to the store, charged to its top-level run's budgets, and
 * looks at those budgets; when one is crossed, by this run or by any other run on any host, it
 * calls `onCrossed` once, and the worker stops its own run. A run no budget covers costs one read.
 */
export class SpendSink {
  private root: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private written: Usage | null = null;
  private stopped = false;
  private ended = false;
  private busy: Promise<void> = Promise.resolve();
  /** The budgets' figures at the last look: the allowance a gateway call is checked against. */
  private figures: Figures[] = [];
  /** The run's allowance in each budget at the last look (lifecycle/budgets/allowance.ts). */
  private allowances = new Map<string, Allowance>();
  /** The first look, which a call made before it ends waits for; whether it could read the store. */
  private first: Promise<boolean> | null = null;
  private firstFailed: unknown = null;
  /** Whether the first look ended (a run no budget covers then checks nothing). */
  private settled = false;
  private live: (() => Usage | null) | null = null;
  /** The largest one call this run has spent, per budget (its unit): what the next call is expected to cost. */
  private sizes = new Map<string, number>();
  /** The usage when the gateway last asked: the growth since is what the calls since cost. */
  private asked: Usage | null = null;
  /** The usage when this run took its host's claim on a budget's last room (null: it holds none). */
  private claimed: Usage | null = null;
  /** Looks calls waited for (one write transaction each), the calls that waited for any, looks that found the room left held by other runs or the host's claim, and calls started holding the claim. */
  looks = 0;
  looked = 0;
  waits = 0;
  claims = 0;
  /** Why the last call refused for an unreadable store was refused (null once a look succeeds): the run's end names it (budget_unreadable). */
  unreadable: string | null = null;
  /** The host whose one claim this run's calls take (budget_hosts): the run's own. */
  private readonly host: string;

  constructor(
    private readonly store: Store,
    private readonly e: Entity,
    private readonly log: WorkerLog,
    private readonly onCrossed: (f: Figures) => void,
    host?: string,
  ) {
    this.host = host ?? e.host ?? hostName();
  }

  /**
   * Starts the flushes if the run's top-level run is charged to any budget; `live` is read at each.
   * The worker does not await it: its provider may end first (a short run on a loaded machine),
   * so a flush or end asked for meanwhile waits for this first look, which says what to charge.
   */
  start(live: () => Usage | null): Promise<void> {
    this.live = live;
    const looked = (this.first = this.firstLook());
    this.busy = looked.then(() => {});
    return looked.then((charged) => {
      this.settled = true;
      if (!charged || this.ended) return;
      this.startFlushes(live);
    });
  }

  private startFlushes(live: () => Usage | null): void {
    this.timer = setInterval(() => void this.flush(live(), false), flushMs());
    this.timer.unref();
  }

  /** Reads the budgets the run is charged to; whether there are any. */
  private async firstLook(): Promise<boolean> {
    try {
      const root = await rootOf(this.store, this.e);
      const figures = await chargedFigures(this.store, root);
      if (!figures.length) return false;
      this.root = root;
      this.figures = figures;
      this.setAllowances(await allowancesOf(this.store, root, this.host));
      // A budget another run already crossed stops this one before its provider spends anything.
      this.check(figures);
      return true;
    } catch (err) {
      this.firstFailed = err;
      this.log(`could not read this run's budgets (${errorText(err)}); its spend is not enforced until the next look, and a metered call is refused until then`);
      return false;
    }
  }

  /** The run's model's price, looked up (settings read) once: it does not change while the run goes. */
  private price: ReturnType<typeof priceOf> | undefined;

  /** The run's spend in USD: the provider's own cost when it reports one, else the price table. */
  private usd(u: Usage): number | null {
    if (u.cost_usd !== null) return u.cost_usd;
    this.price ??= typeof this.e.spec.model === "string" ? priceOf(this.e.spec.model, userPrices()) : null;
    return this.price ? usdOf(u, this.price) : null;
  }

  /** Writes `usage` (once changed) and checks the budgets; serialised, never throws. */
  flush(usage: Usage | null, final: boolean): Promise<void> {
    this.busy = this.busy.then(async () => {
      if (this.root === null) return;
      try {
        const report = { entity_id: this.e.id, root_id: this.root, usage: usage!, usd: usage ? this.usd(usage) : null, final };
        // The last figure outlasts a short storage fault as the run's end does; a live one is
        // simply written again at the next flush.
        const figures =
          usage && final
            ? await persist("recording the run's spend", () => recordSpend(this.store, report), this.log)
            : usage && !same(usage, this.written)
              ? await recordSpend(this.store, report)
              : await chargedFigures(this.store, this.root);
        if (usage) this.written = usage;
        this.figures = figures;
        // A claimed call's spend is written (its usage grew, or the run ended): the host's claim goes back.
        if (this.claimed && (final || !same(usage, this.claimed))) {
          await releaseClaims(this.store, this.host, this.e.id);
          this.claimed = null;
        }
        if (!final) this.setAllowances(await allowancesOf(this.store, this.root, this.host));
        if (!final) this.check(figures);
      } catch (err) {
        // Read again at the next flush; a final figure that never lands leaves the last flushed one counted.
        this.log(`could not write this run's spend (${errorText(err)})${final ? "; its budgets keep the spend last written" : ""}`);
      }
    });
    return this.busy;
  }

  private check(figures: Figures[]): void {
    const over = crossed(figures);
    if (over) this.cross(over);
  }

  /** Stops the run for `f`, once. */
  cross(f: Figures): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onCrossed(f);
  }

  /**
   * The budget known spent once the run has spent `usage` (ahead of what was last written), from
   * the figures of the last look, refreshed by each flush: no store round trip (the gateway asks
   * before each call). Another run's spend since that look is seen at the next one.
   */
  spentBudget(usage: Usage | null): Figures | undefined {
    const amount = (f: Figures, u: Usage | null) => (!u ? 0 : f.unit === "tokens" ? tokensOf(u) : (this.usd(u) ?? 0));
    return this.figures.find((f) => f.spent + Math.max(0, amount(f, usage) - amount(f, this.written)) >= f.limit);
  }

  private setAllowances(list: Allowance[]): void {
    this.allowances = new Map(list.map((a) => [a.budget, a]));
  }

  private amount(f: Figures, u: Usage | null): number {
    return !u ? 0 : f.unit === "tokens" ? tokensOf(u) : (this.usd(u) ?? 0);
  }

  /** A budget in which one more call (of the largest size this run or its host made) does not fit the run's allowance, judged from the last look. */
  private reached(usage: Usage | null): Figures | undefined {
    return this.figures.find((f) => {
      const a = this.allowances.get(f.name);
      if (a === undefined) return false;
      const call = Math.max(a.call, this.sizes.get(f.name) ?? 0);
      return !fits(a.spent + Math.max(0, this.amount(f, usage) - this.amount(f, this.written)), call, a.allowance, f.limit);
    });
  }

  /** What the calls since the gateway last asked cost, per budget: the largest is the size the next call is expected to be. */
  private noteSizes(usage: Usage): void {
    for (const f of this.figures) {
      const d = this.amount(f, usage) - this.amount(f, this.asked);
      if (d > (this.sizes.get(f.name) ?? 0)) this.sizes.set(f.name, d);
    }
    this.asked = usage;
  }

  /**
   * Before a gateway call, with the run's spend so far: null when it starts now (a budget not known
   * spent, inside the run's allowance: no store round trip), else the look that decides it. A call
   * past the allowance waits for a look that takes more (one write transaction); while the room
   * left is reserved by other runs, for the next ones; it is refused only when the store says a
   * budget is spent, or when the store cannot be read (never let past a budget li cannot see).
   */
  admitCall(usage: Usage): CallVerdict | Promise<CallVerdict> {
    if (this.first === null) return null;
    if (this.root === null) {
      if (this.firstFailed || this.retrying) return this.retryFirst(usage);
      return this.settled ? null : this.first.then(() => this.admitCall(usage));
    }
    this.noteSizes(usage);
    const spent = this.spentBudget(usage);
    if (spent) return { spent };
    // A run holding its host's claim looks again: the claimed call's spend is written and the claim goes back.
    return this.claimed || this.reached(usage) ? this.waitForRoom(usage) : null;
  }

  /** A call after a first look that could not read the store: looked at again (once for calls made together), refused if it still cannot. */
  private retrying: Promise<boolean> | null = null;
  private async retryFirst(usage: Usage): Promise<CallVerdict> {
    const charged = await (this.retrying ??= (async () => {
      this.firstFailed = null;
      const c = await this.firstLook();
      if (c && !this.timer && !this.ended && this.live) this.startFlushes(this.live);
      return c;
    })().finally(() => (this.retrying = null)));
    if (this.firstFailed) return { error: (this.unreadable = `li: could not read this run's budgets from the store (${errorText(this.firstFailed)}); the call is refused rather than let past a budget li cannot see`) };
    this.unreadable = null;
    return charged ? this.admitCall(usage) : null;
  }

  private async waitForRoom(usage: Usage): Promise<CallVerdict> {
    this.looked++;
    /** The budgets whose host claim another run held at the last look: read until it is free before looking again. */
    let held: string[] | null = null;
    for (;;) {
      const looked: Promise<CallVerdict | "wait"> = this.busy.then(async () => {
        if (this.ended || this.root === null) return { error: "li: this run's end was recorded; no call starts after it" };
        if (held) {
          // A spend flush (its own timer) may have seen the budget spent meanwhile.
          const spent = crossed(this.figures);
          if (spent) return { spent };
          try {
            if (await claimHeld(this.store, this.host, this.e.id, held)) return "wait";
          } catch (err) {
            this.unreadable = `li: could not look at this run's budgets in the store (${errorText(err)}); the call is refused rather than let past a budget li cannot see`;
            return { error: this.unreadable };
          }
        }
        let verdict;
        try {
          const look = await lookAtBudgets(this.store, { entity_id: this.e.id, root_id: this.root, usage, usd: this.usd(usage), final: false }, this.host, this.sizes);
          this.looks++;
          this.written = usage;
          this.claimed = null;
          this.figures = look.figures;
          this.setAllowances(look.allowances);
          verdict = look.verdict;
        } catch (err) {
          this.unreadable = `li: could not look at this run's budgets in the store (${errorText(err)}); the call is refused rather than let past a budget li cannot see`;
          return { error: this.unreadable };
        }
        this.unreadable = null;
        held = null;
        if (verdict === "wait") return "wait";
        if ("held" in verdict) {
          held = verdict.held;
          return "wait";
        }
        if ("spent" in verdict) return { spent: verdict.spent };
        if (verdict.go.length) {
          this.claimed = usage;
          this.claims++;
        }
        return null;
      });
      this.busy = looked.then(() => {});
      const v = await looked;
      if (v !== "wait") return v;
      this.waits++;
      // The room left is reserved by other runs: they spend it or end, and it comes back.
      await new Promise((r) => setTimeout(r, flushMs()).unref());
    }
  }

  /** The run's last figure, written final; the flushes stop. */
  async end(usage: Usage | null): Promise<void> {
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush(usage, true);
  }
}
