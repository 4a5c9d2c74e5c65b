/**
 * The single composition root: the MCP allowlist. A verb is reachable only if it is
 * registered here (ADR-0066 D8); adding a CLI command never widens the surface by itself.
 */
import { VerbRegistry } from "../src/mcp/registry.js";
import { AgentSubmit } from "./agent/submit.js";
import { ApprovalList } from "./approval/list.js";
import { DECLINED } from "./declined.js";
import { DispatchAck } from "./dispatch/ack.js";
import { DispatchList } from "./dispatch/list.js";
import { DispatchRetry } from "./dispatch/retry.js";
import { DispatchShow } from "./dispatch/show.js";
import { FanoutSubmit } from "./fanout/submit.js";
import { FlowSubmit } from "./flow/submit.js";
import { HostList } from "./host/list.js";
import { JobApply } from "./job/apply.js";
import { JobDiff } from "./job/diff.js";
import { BudgetList } from "./budget/list.js";
import { JobKill } from "./job/kill.js";
import { JobList } from "./job/list.js";
import { JobOutput } from "./job/output.js";
import { JobStatus } from "./job/status.js";
import { JobWait } from "./job/wait.js";
import { PlayList } from "./play/list.js";
import { PlayShow } from "./play/show.js";
import { PlaySubmit } from "./play/submit.js";
import { ProfileList } from "./profile/list.js";
import { ProfileShow } from "./profile/show.js";
import { ServerInfo } from "./server/info.js";
import { StateEvents } from "./state/events.js";
import { StateList } from "./state/list.js";
import { StateShow } from "./state/show.js";
import { Monitor } from "./monitor/show.js";
import { ScheduleCreate } from "./schedule/create.js";
import { ScheduleDelete } from "./schedule/delete.js";
import { ScheduleDisable } from "./schedule/disable.js";
import { ScheduleEnable } from "./schedule/enable.js";
import { ScheduleGet } from "./schedule/get.js";
import { ScheduleList } from "./schedule/list.js";
import { ScheduleRuns } from "./schedule/runs.js";
import { ScheduleTrigger } from "./schedule/trigger.js";
import { Stats } from "./stats/show.js";
import { TeamCreate } from "./team/create.js";
import { TeamList } from "./team/list.js";
import { TeamReceive } from "./team/receive.js";
import { TeamSend } from "./team/send.js";
import { TeamShow } from "./team/show.js";

export const VERBS = [AgentSubmit, FlowSubmit, FanoutSubmit, PlaySubmit, JobStatus, JobOutput, JobList, JobWait, JobKill, JobDiff, JobApply, BudgetList, StateList, StateShow, StateEvents, DispatchList, DispatchShow, DispatchRetry, DispatchAck,
  PlayList, PlayShow, ServerInfo,
  // Never schedule tick or daemon: unattended, long-running machinery is not an MCP operation.
  ScheduleCreate, ScheduleList, ScheduleGet, ScheduleEnable, ScheduleDisable, ScheduleDelete, ScheduleTrigger, ScheduleRuns,
  TeamCreate, TeamList, TeamShow, TeamSend, TeamReceive,
  ProfileList, ProfileShow,
  Monitor, Stats, HostList,
  // Reading only: li approve and li deny are fenced (src/mcp/fence.ts).
  ApprovalList];

export function composeRegistry(): VerbRegistry {
  const registry = new VerbRegistry();
  for (const v of VERBS) registry.register(v);
  for (const d of DECLINED) registry.decline(d);
  return registry;
}
