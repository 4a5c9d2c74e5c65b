import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { userPrices } from "../../config/user-prices.js";
import { loadSettings } from "../../config/settings.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import type { RunResult, Usage } from "../../lifecycle/usage.js";
import { crypto } from "../../packages.js";
import { GatewayMeter, underReported } from "./meter.js";
import { GATEWAY_PORT, gatewayPlan } from "./plan.js";
import { startGateway, type Gateway, type GatewayCall } from "./server.js";

/*
 * The worker's side of the model gateway (docs/gateway.md): whether a run is metered (always in
 * the workspace sandbox; an unsandboxed one when settings say `gateway: on`), the gateway started
 * for it and its provider's environment pointed there, and at the end the run's usage taken from
 * its calls, the stream's own figures kept beside them.
 */


export interface RunGateway {
  /** The Unix socket the sandbox bridges to GATEWAY_PORT; null for an unsandboxed run (TCP loopback). */
  socket: string | null;
  meter: GatewayMeter;
  /** Before each model call: null, or why it is refused. */
  refuse: { reason: string | null };
  close(): void;
}

function sockPath(runDir: string): { sock: string; dir: string | null } {
  const sock = path.join(runDir, "gateway.sock");
  if (sock.length <= 100) return { sock, dir: null };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "li-gw-"));
  return { sock: path.join(dir, "gateway.sock"), dir };
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
export async function openGateway(e: Entity, provider: string, env: NodeJS.ProcessEnv, onCall: (c: GatewayCall) => void = () => {}): Promise<RunGateway | { unmetered: string } | { error: string }> {
  const planned = gatewayPlan(provider, env);
  if ("invalid" in planned) return { error: planned.invalid };
  if ("unmetered" in planned) return planned;
  const { plan } = planned;
  const sandboxed = e.spec.sandbox === "workspace";
  const secret = crypto().randomBytes(24).toString("hex");
  const meter = new GatewayMeter(provider, String(e.spec.model), userPrices);
  const refuse = { reason: null as string | null };
  const at = sandboxed ? sockPath(e.run_dir!) : null;
  if (at) fs.rmSync(at.sock, { force: true });
  let gw: Gateway;
  try {
    gw = await startGateway(at ? { socket: at.sock } : { port: 0 }, {
      api: plan.api,
      upstream: plan.upstream,
      secret,
      key: plan.key,
      admit: () => refuse.reason,
      onCall: (c) => {
        meter.add(c);
        onCall(c);
      },
    });
  } catch (err: any) {
    return { error: `could not start the model gateway (${err?.message ?? err})` };
  }
  plan.apply(env, `http://127.0.0.1:${sandboxed ? GATEWAY_PORT : gw.port}${gw.prefix}`);
  return {
    socket: at?.sock ?? null,
    meter,
    refuse,
    close: () => {
      gw.close();
      if (at?.dir) fs.rmSync(at.dir, { recursive: true, force: true });
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
  await store.annotate(e.id, { spec: { gateway: gatewaySummary(gw, stream, String(e.spec.model)) } }).catch(() => false);
}
