import fs from "node:fs";
import path from "node:path";
import { invalid } from "../../errors.js";
import { PROVIDER_RESULT_FILE } from "../../lifecycle/end-evidence.js";
import { usage, usageOf, type Usage } from "../../lifecycle/usage.js";
import { sessionRuns } from "../../lifecycle/listing.js";
import { registeredHosts } from "../../lifecycle/hosts.js";
import { thisHost } from "../../lifecycle/locate.js";
import { resolve } from "../../lifecycle/resolver.js";
import type { Entity, Store } from "../../lifecycle/store.js";
import { isTerminal } from "../../lifecycle/vocab.js";
import { checkRunSettings } from "../providers/capabilities.js";
import { parseModelSpec } from "../providers/index.js";
import type { Baseline } from "../providers/streams/parser.js";
import type { Provider } from "../providers/types.js";
import { getChange } from "../../lifecycle/changes/records.js";
import { captureOwed } from "../../lifecycle/changes/owed.js";
import type { IsolationSpec } from "../worktree/isolation.js";

/**
 * A run `li agent --resume RUN_ID` continues: the provider session recorded on RUN_ID, in its
 * cwd, with its model and profile unless the new run names others.
 */
export interface ResumeTarget {
  run_id: string;
  session_id: string;
  model: string;
  cwd: string;
  profile: string | null;
  /** The host RUN_ID ran on (null: recorded before hosts were): the provider's session is there. */
  host: string | null;
  /**
   * An isolated RUN_ID's worktree and branch, which the resumed run continues in (providers key
   * their sessions by directory), from RUN_ID's head: its change is its own increment.
   */
  isolation: IsolationSpec | null;
  /** RUN_ID's sandbox, which the resumed run keeps unless it names one. */
  sandbox: "workspace" | "off";
}

/** What a resumed run sends when it is given no prompt. */
export const RESUME_PROMPT = "continue";

export async function resumeTarget(store: Store, text: string): Promise<ResumeTarget> {
  const e = await resolve(store, text);
  const field = { field: "resume", resume: e.id };
  if (e.kind !== "invocation") throw invalid(`--resume ${e.id}: only an agent run (an invocation) has a provider session to continue; ${e.id} is a ${e.kind}`, field);
  const model = String(e.spec.model ?? "");
  const provider = parseModelSpec(model).provider;
  // A provider without resume is refused by name before anything else is judged.
  checkRunSettings(provider, { resume_session: "?" }, "this run");
  if (!isTerminal(e.status))
    throw invalid(`--resume ${e.id}: it is still ${e.status}; two runs must not drive one ${provider.name} session at once, so wait for it (li wait ${e.id}) and resume it then`, { ...field, status: e.status });
  if (!e.provider_session_id)
    throw invalid(`--resume ${e.id}: it recorded no ${provider.name} session id (it ended ${e.status} before ${provider.name} reported one), so there is nothing to continue`, { ...field, status: e.status });
  return {
    run_id: e.id,
    session_id: e.provider_session_id,
    model,
    cwd: String(e.spec.cwd),
    profile: typeof e.spec.profile === "string" ? e.spec.profile : null,
    host: e.host,
    isolation: await resumedIsolation(store, e),
    sandbox: e.spec.sandbox === "workspace" ? "workspace" : "off",
  };
}

/** Where an isolated run's resumption starts: its branch at the head its change was captured at. */
async function resumedIsolation(store: Store, e: Entity): Promise<IsolationSpec | null> {
  const iso = e.spec.isolation as IsolationSpec | undefined;
  if (!iso) return null;
  let change = await getChange(store, e.id);
  if (!change) {
    await captureOwed(store, [e]);
    change = await getChange(store, e.id);
  }
  if (!change)
    throw invalid(`--resume ${e.id}: its change is not captured yet${e.host ? ` (its worktree is on host ${e.host})` : ""}; li job diff ${e.id} there captures it, then resume`, { field: "resume", resume: e.id });
  return { ...iso, base: null, base_sha: change.head_sha, carry_changes: false, continues: e.id };
}

/**
 * Where a resumed run must run: on the host its provider session lives on (the provider keeps it
 * on that machine's disk). A run of this host resumes here, as it always did; one of another host
 * is placed on that host for its daemon to claim, or refused with the remedy when that host runs
 * no daemon. A --host naming anywhere else is refused: the session is not there.
 */
export async function resumePlace(store: Store, t: ResumeTarget, host: string | undefined): Promise<string | undefined> {
  const home = t.host ?? thisHost();
  const field = { field: "host", resume: t.run_id, session_host: home };
  if (host !== undefined && host !== home)
    throw invalid(`--resume ${t.run_id}: its provider session is on host ${home}, where that run ran, so the resumed run must run there: give --host ${home} or leave out --host`, { ...field, host });
  if (home === thisHost()) return host;
  if (!(await registeredHosts(store)).includes(home))
    throw invalid(`--resume ${t.run_id}: its provider session is on host ${home}, which runs no host daemon (li host run) to place the run on; run li agent --resume ${t.run_id} on ${home}, or start li host run there`, field);
  return home;
}

/**
 * What a resumed run's provider will count before the run's own turn: the session's running
 * totals at the end of its last turn, whichever run that was (the run resumed, or a later one:
 * a session resumed twice from one run goes on from where its latest turn left it, not from that
 * run). From the provider's own records when it keeps some li can read (codex's thread log),
 * else from li's: the provider's totals at the end of the session's run that ended last. Null for
 * a run that starts a session.
 */
export async function resumeBaseline(store: Store, run: Entity, provider: Provider, env: NodeJS.ProcessEnv): Promise<Baseline | null> {
  const session = run.spec.resume_session;
  if (typeof session !== "string" || typeof run.spec.resumes !== "string") return null;
  const own = provider.sessionTotals?.(session, env);
  if (own) return { totals: own };
  return recordedBaseline(store, run, session, run.spec.resumes);
}

async function recordedBaseline(store: Store, run: Entity, session: string, resumes: string): Promise<Baseline> {
  // The session's first run, back along the resumes links: no run of the session is older.
  let first = await store.get(resumes);
  const seen = new Set<string>();
  while (first && typeof first.spec.resumes === "string" && !seen.has(first.id)) {
    seen.add(first.id);
    const up = await store.get(first.spec.resumes);
    if (!up) break;
    first = up;
  }
  if (!first) return { unknown: `${resumes}, the run it resumes, is no longer recorded, so the session's totals before this run are not known` };
  const others = (await sessionRuns(store, session, first.created_at)).filter((r) => r.id !== run.id);
  const live = others.find((r) => !isTerminal(r.status));
  if (live) return { unknown: `${live.id}, another run of the same session, was still ${live.status} when this run started, so the session's totals before this run are not known` };
  const last = others.filter((r) => r.ended_at).sort((a, b) => a.ended_at!.localeCompare(b.ended_at!) || a.id.localeCompare(b.id)).at(-1);
  if (!last) return { unknown: `no earlier run of the session is recorded, so its totals before this run are not known` };
  const totals = endTotals(last);
  if (!totals)
    return { unknown: `${last.id}, the session's run that ended last before this one, ended ${last.status} without reporting the session's running totals (stopped mid-turn), so the part of them that is this run's is not known` };
  return { totals };
}

/**
 * The running totals the provider reported at the end of run `e` (provider-result.json's
 * session_totals); null when it reported none. A run recorded before li kept them recorded the
 * provider's figures as they came, totals included.
 */
function endTotals(e: Entity): Usage | null {
  try {
    const t = JSON.parse(fs.readFileSync(path.join(e.run_dir!, PROVIDER_RESULT_FILE), "utf8"))?.session_totals;
    if (t && typeof t === "object") return usage(t.input_tokens, t.output_tokens, t.cached_tokens, t.cost_usd);
    if (t === null) return null;
  } catch {
    /* no file (killed before it ended): fall back to what was recorded */
  }
  return usageOf(e);
}
