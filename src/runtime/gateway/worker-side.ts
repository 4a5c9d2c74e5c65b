import fs from "node:fs";
import path from "node:path";
import { userPrices } from "../../config/user-prices.js";
import { loadSettings } from "../../config/settings.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import type { RunResult, Usage } from "../../lifecycle/usage.js";
import { writeCalls, type CallRow } from "../../lifecycle/gateway-calls/records.js";
import { crypto } from "../../packages.js";
import { errorText, type WorkerLog } from "../worker/worker-log.js";
import { GatewayMeter, underReported } from "./meter.js";
import { acpPlan } from "./acp-plan.js";
import { GATEWAY_PORT, gatewayPlan } from "./plan.js";
import { belowFloor } from "./versions.js";
import { startGateway, type Gateway, type GatewayCall } from "./server.js";

/*
 * The worker's side of the model gateway (docs/gateway.md): whether a run is metered (always in
 * the workspace sandbox; an unsandboxed one when settings say `gateway: on`), the gateway started
 * for it and its provider's environment pointed there, and at the end the run's usage taken from
 * its calls, the stream's own figures kept beside them.
 */


export interface RunGateway {
  /** Arguments the provider takes after its subcommand to reach the gateway (codex's -c). */
  args: string[];
  /** The Unix socket the sandbox bridges to GATEWAY_PORT; null for an unsandboxed run (TCP loopback). */
  socket: string | null;
  meter: GatewayMeter;
  /** Before each model call: why it is refused (`reason`, else what `check` says, at once or after a look), or null. */
  refuse: { reason: string | null; check?: () => string | null | Promise<string | null> };
  /** Writes the calls not yet stored (a batch at a time while the run goes; awaited at its end). */
  flush(): Promise<void>;
  close(): void;
}

/** How long a call waits for the batch it is written in: one transaction per batch, not per call. */
const BATCH_MS = 250;

/** The store rows of a run's calls, written in batches in the background, never holding a call up. */
function callWriter(store: Store, id: string, log: WorkerLog) {
  let pending: CallRow[] = [];
  let timer: NodeJS.Timeout | null = null;
  let busy: Promise<void> = Promise.resolve();
  let seq = 0;
  const flush = (): Promise<void> =>
    (busy = busy.then(async () => {
      if (timer) clearTimeout(timer);
      timer = null;
      const batch = pending;
      pending = [];
      try {
        await writeCalls(store, batch);
      } catch (err) {
        // Kept for the next batch; the run's usage on its record is the sum either way.
        pending = [...batch, ...pending];
        log(`could not record ${batch.length} model call(s) (${errorText(err)})`);
      }
    }));
  return {
    flush,
    add(c: GatewayCall & { cost_usd: number | null }) {
      const u = c.usage;
      pending.push({ entity_id: id, seq: ++seq, at: c.at, model: c.model, input_tokens: u?.input_tokens ?? 0, output_tokens: u?.output_tokens ?? 0, cached_tokens: u?.cached_tokens ?? 0, cost_usd: c.cost_usd, status: c.status, http_status: c.http_status, error: c.error });
      if (!timer) {
        timer = setTimeout(() => void flush(), BATCH_MS);
        timer.unref();
      }
    },
  };
}

/** In the run's own directory however deep (unix-socket.ts): never a shared one another run could reach. */
function sockPath(runDir: string): { sock: string } {
  return { sock: path.join(runDir, "gateway.sock") };
}

/** Whether `e` goes through the gateway: sandboxed runs always, others when settings say on. */
export function gatewayWanted(e: Entity): boolean {
  if (e.spec.sandbox === "workspace") return true;
  try {
    return loadSettings(e.spec.settings_dir ?? e.spec.cwd).gateway === "on";
  } catch {
    return false;
  }
}

/**
 * Starts `e`'s gateway and points `env` at it: the run's gateway, `{unmetered}` when its provider's
 * login cannot be metered (it runs as before), or `{error}` (it must not start).
 */
export async function openGateway(store: Store, e: Entity, provider: string, env: NodeJS.ProcessEnv, log: WorkerLog): Promise<RunGateway | { unmetered: string; source?: "stream" | "agent" } | { error: string }> {
  const planned = provider === "acp" ? acpPlan(env) : gatewayPlan(provider, env);
  if ("invalid" in planned) return { error: planned.invalid };
  if ("unmetered" in planned) return planned;
  const { plan } = planned;
  const old = belowFloor(provider, env.PATH);
  if (old) return { error: old };
  const sandboxed = e.spec.sandbox === "workspace";
  const secret = crypto().randomBytes(24).toString("hex");
  const meter = new GatewayMeter(provider, String(e.spec.model), userPrices);
  const refuse: RunGateway["refuse"] = { reason: null };
  const rows = callWriter(store, e.id, log);
  const at = sandboxed ? sockPath(e.run_dir!) : null;
  if (at) fs.rmSync(at.sock, { force: true });
  let gw: Gateway;
  try {
    gw = await startGateway(at ? { socket: at.sock } : { port: 0 }, {
      api: plan.api,
      upstream: plan.upstream,
      secret,
      key: plan.key,
      admit: () => refuse.reason ?? refuse.check?.() ?? null,
      onCall: (c) => rows.add(meter.add(c)),
    });
  } catch (err: any) {
    return { error: `could not start the model gateway (${err?.message ?? err})` };
  }
  const base = `http://127.0.0.1:${sandboxed ? GATEWAY_PORT : gw.port}${gw.prefix}`;
  plan.apply(env, base);
  return {
    args: plan.args?.(base) ?? [],
    socket: at?.sock ?? null,
    meter,
    refuse,
    flush: rows.flush,
    close: () => {
      gw.close();
    },
  };
}

/** What the record keeps of a metered run's calls beside its usage. */
export function gatewaySummary(gw: RunGateway, stream: Usage | null, runModel: string) {
  const calls = gw.meter.calls;
  return {
    usage_source: "gateway",
    calls: calls.length,
    failed_calls: calls.filter((c) => c.status !== "ok").length,
    stream_usage: stream,
    usage_mismatch: underReported(stream, calls, runModel),
  };
}

/** The run's result with its usage from the gateway's calls. */
export function meteredResult(gw: RunGateway, result: RunResult | undefined): RunResult {
  const base: RunResult = result ?? { result_text: null, usage: null, provider_session_id: null, num_turns: null };
  return { ...base, usage: gw.meter.total(), usage_unknown: null };
}

export async function recordGateway(store: Store, e: Entity, gw: RunGateway, stream: Usage | null): Promise<void> {
  await gw.flush();
  await store.annotate(e.id, { spec: { gateway: gatewaySummary(gw, stream, String(e.spec.model)) } }).catch(() => false);
}
