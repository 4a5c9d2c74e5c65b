import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CWD_MISSING, cwdMissingMessage, isDirectory } from "../../lifecycle/cwd-missing.js";
import { thisHost } from "../../lifecycle/locate.js";
import { PROVIDER_RESULT_FILE } from "../../lifecycle/end-evidence.js";
import { childEnv } from "../../lifecycle/child-env.js";
import { writePrivateFile } from "../../lifecycle/paths.js";
import type { Store } from "../../lifecycle/store.js";
import { resultPatch } from "../../lifecycle/usage.js";
import { pipeProviderStream } from "./provider-stream.js";
import { parseModelSpec } from "../providers/index.js";
import { parserFor } from "../providers/streams/index.js";
import { resumeBaseline } from "../submit/resume.js";
import type { StreamEnd } from "../providers/streams/parser.js";
import type { LaunchSpec, Provider } from "../providers/types.js";
import { RunEnd } from "./run-end.js";
import { runSettingsFor } from "../submit/run-settings.js";
import { resolveEndpoint } from "../submit/settings-bridge.js";
import { publishRunning } from "../submit/spawn.js";
import { SpendSink, type CallVerdict } from "./spend-sink.js";
import { startAsking } from "../approvals/worker-asks.js";
import { acpAgentOf } from "../submit/acp-agents.js";
import { splitAcpModel } from "../providers/acp/provider.js";
import { APPROVAL_SOCKET_ENV } from "../approvals/protocol.js";
import { captureChange, dropUnstarted, enterIsolation, killGroupButSelf } from "../worktree/worker-side.js";
import { sandboxUnavailable, startSandbox, type RunSandbox } from "../sandbox/worker-side.js";
import { gatewayWanted, meteredResult, openGateway, recordGateway, type RunGateway } from "../gateway/worker-side.js";

/** Seconds between SIGTERM and SIGKILL when a run passes its --timeout. */
const TIMEOUT_GRACE_MS = 2000;
/** After the provider exits, how long its stdout may stay open (a tool it started holding the pipe) before the end is decided. */
const DRAIN_MS = 2000;

/** Node fires a setTimeout delay above 2^31-1 ms after 1 ms; longer deadlines are chained. */
const MAX_DELAY_MS = 2 ** 31 - 1;
function deadline(ms: number, fn: () => void): { clear(): void } {
  let t: NodeJS.Timeout;
  const arm = (left: number) => {
    t = setTimeout(left > MAX_DELAY_MS ? () => arm(left - MAX_DELAY_MS) : fn, Math.min(left, MAX_DELAY_MS));
  };
  arm(ms);
  return { clear: () => clearTimeout(t) };
}


/** The reason a provider's own report gives a failed run (invocation.failed.<cause>). */
function errorCause(end: StreamEnd): string {
  const c = end.error!.class;
  return c === "max_turns" ? "max_turns" : c === "budget" ? "budget_exceeded" : `provider_${c}`;
}

/** Runs one invocation's provider process and records how it ended. */
export async function run(store: Store, id: string): Promise<void> {
  const e = await publishRunning(store, id, "invocation");
  // Killed or reaped before it could start (or running could not be recorded): nothing to run.
  if (!e) return;
  const pgid = e.pgid!;
  const dir = e.run_dir!;
  const promptFile = path.join(dir, "prompt.txt");
  const out = fs.openSync(path.join(dir, "console.log"), "a", 0o600);
  const end = new RunEnd(store, e);

  // A sandboxed run's end says in the audit log how many calls its sandbox refused.
  let sandbox: RunSandbox | null = null;
  const refused = () => (sandbox ? { sandbox_refused: sandbox.result().denials.total } : {});
  const finish = (to: "completed" | "failed" | "timed_out", cause: string, exit_code: number | null, detail?: Record<string, unknown>, result?: StreamEnd) =>
    end.finish(to, cause, { patch: { exit_code, ...resultPatch(result ?? null) }, detail: sandbox ? { ...detail, ...refused() } : detail });

  let launch: LaunchSpec;
  let provider: Provider;
  let profileEnv: Record<string, string> = {};
  try {
    const spec = parseModelSpec(e.spec.model);
    provider = spec.provider;
    // Resolved now, from the settings where the run was submitted: the record holds only names.
    const { run, env } = runSettingsFor(e.spec, e.spec.settings_dir);
    profileEnv = env;
    const endpoint = spec.provider.usesEndpoint ? { endpoint: resolveEndpoint(e.spec.endpoint ?? undefined, e.spec.settings_dir) } : {};
    const acp = spec.provider.name === "acp" ? { acp_agent: acpAgentOf(splitAcpModel(spec.model).name, e.spec.settings_dir) } : {};
    const resumed = typeof e.spec.resumes === "string" ? (await store.get(e.spec.resumes))?.ended_at : null;
    launch = spec.provider.launch(spec.model, promptFile, { ...endpoint, ...acp, run, ...(e.spec.sandbox === "workspace" ? { sandbox: "workspace" as const } : {}), ...(resumed ? { resumed_ended_at: resumed } : {}) });
  } catch (err: any) {
    try {
      fs.writeSync(out, `li: ${err?.message ?? err}\n`);
    } catch {}
    await finish("failed", "spawn_error", null);
    return;
  }

  // A kill that landed after `running` was published: do not start the provider at all.
  if ((await store.get(id))?.status !== "running") return;
  // A run that asked for a sandbox never runs without one: it ends here, before any worktree.
  const unsandboxable = sandboxUnavailable(e, out);
  if (unsandboxable) return void (await finish("failed", "sandbox_unavailable", null, unsandboxable));
  const isolated = !!e.spec.isolation;
  let cwd: string = e.spec.cwd;
  if (isolated) {
    const entered = await enterIsolation(store, e, out, end);
    if (entered === null) return;
    cwd = entered;
  }
  const stdin = launch.stdin === "prompt" ? fs.openSync(promptFile, "r") : "ignore";
  const structured = launch.stream !== "text";
  const raw = structured ? fs.openSync(path.join(dir, "events.jsonl"), "a", 0o600) : -1;
  // The agent is not li: no store URL, no store credentials (D9; see child-env.ts).
  const env = childEnv(process.env, profileEnv, launch.env);
  // A fan-out's workers get the same prompt; their place tells them apart (mock/edit's `worker K:`).
  if (typeof e.spec.fanout_worker === "number") env.LI_FANOUT_WORKER = String(e.spec.fanout_worker);
  // A resumed session's provider may report running totals: the parser takes off what came before.
  const baseline = structured ? await resumeBaseline(store, e, provider, env) : null;
  // approvals: ask: the agent's permission prompts come to this worker, which asks a person.
  let asking: Awaited<ReturnType<typeof startAsking>> = null;
  try {
    asking = await startAsking(store, e, env, end.log);
  } catch (err: any) {
    end.log(`could not open the approval channel: ${err?.message ?? err}`);
  }
  if (asking) env[APPROVAL_SOCKET_ENV] = asking.path;
  // The model gateway (docs/gateway.md): usage from the API's answers, the key held here, not inside.
  const gw = gatewayWanted(e) ? await openGateway(store, e, provider.name, env, end.log) : null;
  const metered: RunGateway | null = gw && "meter" in gw ? gw : null;
  if (metered?.args.length) launch = { ...launch, argv: [launch.argv[0], launch.argv[1], ...metered.args, ...launch.argv.slice(2)] };
  // Said at the start, so budgets tell a metered run from an unmetered one while it goes.
  if (gw && !("error" in gw)) await store.annotate(id, { spec: { gateway: "unmetered" in gw ? { usage_source: gw.source ?? "stream", unmetered: gw.unmetered } : { usage_source: "gateway" } } }).catch(() => false);
  // After the channel: a sandboxed agent reaches its socket through the sandbox (run.ts).
  const started = gw && "error" in gw ? false : e.spec.sandbox === "workspace" ? await startSandbox(store, e, cwd, provider.name, env, out, metered?.socket ?? null) : null;
  if (started === false) {
    void asking?.close();
    metered?.close();
    if (gw && "error" in gw) fs.writeSync(out, `li: ${id} did not start: ${gw.error}\n`);
    await finish("failed", gw && "error" in gw ? "gateway_failed" : "sandbox_failed", null, gw && "error" in gw ? { error: gw.error } : undefined);
    if (isolated) await dropUnstarted(store, id, end);
    return;
  }
  sandbox = started;
  await new Promise<void>((resolve, reject) => {
    const settle = (ending: Promise<unknown>) => ending.then(() => resolve(), reject);
    // A plain-text provider writes its console itself; a structured one is read and rendered.
    const stdio: ("pipe" | number | "ignore")[] = [stdin, structured ? "pipe" : out, out];
    const child = sandbox ? sandbox.spawn(launch.argv, { stdio, env }) : spawn(launch.argv[0], launch.argv.slice(1), { cwd, stdio, env });
    const parser = launch.stream === "text" ? null : parserFor(launch.stream, { baseline, env });
    const streamed = parser
      ? pipeProviderStream(child.stdout!, parser, { console: out, raw }, (session) => {
          // Bookkeeping beside the stream, never holding it up; a failed write is only logged.
          store.annotate(id, { provider_session_id: session }).catch((err: any) => {
            end.log(`could not record the provider session id ${session} (${err?.message ?? err})`);
          });
        })
      : Promise.resolve();
    /** A budget's stop under way: the provider's exit (a refused call) waits for its end to be recorded first. */
    let stopping: Promise<unknown> | null = null;
    /** Records an end li decided (a deadline, a budget), then kills the whole group, this worker included. */
    const stop = (to: "timed_out" | "failed", cause: string, detail: Record<string, unknown>) => {
      // Record first (its first attempt is synchronous; retries may be cut short by the kill,
      // end.json keeps the end), with the usage the stream had reported by then.
      const usage = liveOf();
      void sandbox?.record();
      const stream = parser?.live ?? null;
      // The refusal count's last write lands before the end, which the store would refuse it after:
      // bounded well inside the kill's grace, so the end is still written before the SIGKILL.
      const noted = asking ? Promise.race([asking.noted(), new Promise((r) => setTimeout(r, TIMEOUT_GRACE_MS / 2).unref())]) : null;
      const ending = Promise.all([metered ? recordGateway(store, e, metered, stream) : null, noted]).then(() =>
        finish(to, cause, null, detail, usage ? { result_text: null, usage, provider_session_id: null, num_turns: null, error: null } : undefined),
      );
      ending.catch(reject);
      try {
        process.kill(-pgid, "SIGTERM");
      } catch {}
      setTimeout(() => {
        // An isolated run's worker outlives its agent, to capture the change it made.
        if (isolated) killGroupButSelf(pgid, e.proc_start!);
        else
          try {
            process.kill(-pgid, "SIGKILL");
          } catch {}
      }, TIMEOUT_GRACE_MS);
      return ending;
    };
    // What the provider reported beside its stream (a log it keeps) counts too, read as live is.
    const liveOf = () => {
      parser?.poll?.();
      return metered ? metered.meter.total() : (parser?.live ?? null);
    };
    let timer: { clear(): void } | undefined;
    if (e.spec.timeout_seconds) timer = deadline(e.spec.timeout_seconds * 1000, () => void stop("timed_out", "deadline", { timeout_seconds: e.spec.timeout_seconds }));
    // Over budget: the spend so far is written final first, since the kill may take this worker too.
    const sink: SpendSink = new SpendSink(store, e, end.log, (f) => {
      // The gateway refuses every call from now on, in the API's own error shape.
      if (metered) metered.refuse.reason = `li: budget ${f.name} is spent (${f.spent} of ${f.limit} ${f.unit}); this run is stopped`;
      stopping = sink.end(liveOf()).then(() =>
        stop("failed", "budget_exceeded", { budget: f.name, unit: f.unit, spent: f.spent, limit: f.limit, period_start: f.period_start, error: `budget ${f.name} was crossed: spent ${f.spent} of ${f.limit} ${f.unit}` }),
      );
    });
    void sink.start(liveOf);
    // Past its memory limit (docs/sandbox.md#limits): recorded failed (sandbox_limit), then stopped as a budget stop is; so is a sandbox whose bridge broke (sandbox_failed).
    sandbox?.onLimit((cause, d) => void (stopping ??= stop("failed", cause, d)));
    // Each model call is checked against the budgets as last looked at, plus what the run spent since, and its allowance.
    if (metered)
      metered.refuse.check = () => {
        // Inside the run's allowance no store round trip; past it, the call waits for a look (spend-sink.ts).
        const judged = (v: CallVerdict): string | null => {
          if (!v || "error" in v) return v?.error ?? null;
          sink.cross(v.spent);
          return (metered.refuse.reason = `li: budget ${v.spent.name} is spent (${v.spent.limit} ${v.spent.unit}); this run is stopped`);
        };
        const v = sink.admitCall(metered.meter.total());
        return v instanceof Promise ? v.then(judged) : judged(v);
      };
    child.on("error", (err) => {
      timer?.clear();
      void asking?.close();
      // spawn says ENOENT of the program when the directory is what is missing: name the directory.
      const gone = isDirectory(e.spec.cwd) ? null : { error: cwdMissingMessage(e.spec.cwd, thisHost()), cwd: e.spec.cwd, host: thisHost() };
      try {
        fs.writeSync(out, `li: could not start ${launch.argv[0]}: ${gone?.error ?? err.message}\n`);
      } catch {}
      void settle(gone ? finish("failed", CWD_MISSING, null, gone) : finish("failed", "spawn_error", null, { error: err.message }));
    });
    child.on("exit", (code, signal) => {
      timer?.clear();
      void asking?.close();
      void settle(
        (async () => {
          if (stopping) await stopping;
          // Bounded: a store that does not answer must not hold the end back.
          if (asking) await Promise.race([asking.noted(), new Promise((r) => setTimeout(r, 5000).unref())]);
          // A pending drain timer would keep this worker alive after its end is written, and a
          // reader would then see a finished run with a live process (possibly_orphaned).
          let drain: NodeJS.Timeout | undefined;
          await Promise.race([streamed, new Promise((r) => (drain = setTimeout(r, DRAIN_MS)))]);
          clearTimeout(drain);
          await sandbox?.record();
          if (isolated) await captureChange(store, id, out, end);
          const own = parser ? parser.end({ code, signal }) : undefined;
          metered?.close();
          if (metered) await recordGateway(store, e, metered, own?.usage ?? null);
          const result: StreamEnd | undefined = metered ? { error: null, ...own, ...meteredResult(metered, own) } : own;
          await sink.end(result?.usage ?? liveOf());
          if (result) {
            try {
              writePrivateFile(path.join(dir, PROVIDER_RESULT_FILE), JSON.stringify(result));
            } catch (err: any) {
              end.log(`could not write ${PROVIDER_RESULT_FILE} (${err?.message ?? err})`);
            }
          }
          // Its last call refused because the budgets could not be read: no budget was spent, so not budget_exceeded (docs/budgets.md#per-call).
          if (sink.unreadable && (result?.error || code !== 0)) return finish("failed", "budget_unreadable", code, { error: sink.unreadable }, result);
          if (result?.error) return finish("failed", errorCause(result), code, { error_class: result.error.class, error: result.error.message }, result);
          if (code === 0) return finish("completed", "exit_zero", 0, undefined, result);
          if (signal) return finish("failed", "signal", null, { signal }, result);
          return finish("failed", "exit_nonzero", code, undefined, result);
        })(),
      );
    });
  });
}
