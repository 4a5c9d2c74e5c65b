// Small pieces every page uses: badges, ages, durations and the job table.
import type { ComponentChildren } from "preact";
import type { Job } from "./api";
import { runHref } from "./router";
import { age, duration, useNow } from "./time";

export const STATUSES = ["queued", "preparing", "running", "completed", "failed", "cancelled", "timed_out", "lost"];
export const KINDS = ["invocation", "session", "play"];
export const TERMINAL = new Set(["completed", "failed", "cancelled", "timed_out", "lost"]);

/** The colour family of a status: the badge's and the graph node's class. */
export function tone(status: string): string {
  switch (status) {
    case "running": case "preparing": case "delivering": return "blue";
    case "completed": case "delivered": case "acked": case "enabled": return "green";
    case "failed": case "timed_out": case "lost": return "red";
    case "cancelled": case "disabled": return "amber";
    default: return "grey";
  }
}

export function Badge({ status, id }: { status: string; id?: string }) {
  return <span id={id} class={`badge ${tone(status)}`} data-status={status}>{status}</span>;
}

/** An age that moves on every second, the ISO time in its title. */
export function Age({ at, empty = "—" }: { at: string | null | undefined; empty?: string }) {
  const now = useNow();
  if (!at) return <span class="muted">{empty}</span>;
  return <time dateTime={at} title={at}>{age(at, now)}</time>;
}

/** started→ended, or started→now while it runs. */
export function Duration({ start, end }: { start: string | null; end: string | null }) {
  const now = useNow();
  if (!start) return <span class="muted">—</span>;
  const s = Date.parse(start);
  const e = end ? Date.parse(end) : now;
  const title = `${start} → ${end ?? "now"}`;
  return <span title={title} class={end ? "" : "ticking"}>{duration(e - s)}</span>;
}

export function Mono({ children }: { children: ComponentChildren }) {
  return <code class="mono">{children}</code>;
}

export function JobRow({ job }: { job: Job }) {
  return (
    <tr data-run-id={job.id} data-status={job.status} data-host={job.host ?? ""}>
      <td class="id"><a class="mono" href={runHref(job.id)}>{job.id}</a></td>
      <td class="kind">{job.kind}</td>
      <td class="status"><Badge status={job.status} /></td>
      <td class="label">{job.label ?? <span class="muted">—</span>}</td>
      <td class="model">{job.model ?? <span class="muted">—</span>}</td>
      <td class="age"><Age at={job.created_at} /></td>
      <td class="duration"><Duration start={job.started_at} end={job.ended_at} /></td>
      <td class="host">{job.host ?? <span class="muted">{job.place ? `for ${job.place}` : "—"}</span>}</td>
      <td class="queue">{job.queue_position != null ? `#${job.queue_position} in line` : ""}</td>
    </tr>
  );
}

export function JobTable({ jobs, empty }: { jobs: Job[]; empty: string }) {
  if (jobs.length === 0) return <p class="empty">{empty}</p>;
  return (
    <table class="grid jobs">
      <thead>
        <tr><th>id</th><th>kind</th><th>status</th><th>label</th><th>model</th><th>age</th><th>duration</th><th>host</th><th>queue</th></tr>
      </thead>
      <tbody>{jobs.map((j) => <JobRow key={j.id} job={j} />)}</tbody>
    </table>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="loading">Loading {what}…</p>;
}

export const pretty = (v: unknown) => JSON.stringify(v, null, 2);

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
