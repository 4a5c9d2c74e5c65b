/**
 * Times as a person reads them: relative ages and short durations in tables, local wall-clock
 * times in detail views with the zone named once. Human mode only: machine output keeps ISO
 * 8601 UTC and seconds (ADR-0066 D7).
 */

const pad = (n: number) => String(n).padStart(2, "0");

/** `12s`, `3m04s`, `2h05m`, `3d04h`; tenths below ten seconds. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "-";
  if (seconds < 10) return `${(Math.floor(seconds * 10) / 10).toFixed(1)}s`;
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor(s / 3600) % 24)}h`;
}

/** `just now`, `42s ago`, `5m ago`, `3h ago`, `2d ago` (or `in 5m` ahead); an old time as its local date. */
export function ago(iso: string | null, now = Date.now()): string {
  if (!iso) return "-";
  const s = Math.floor((now - Date.parse(iso)) / 1000);
  const span = Math.abs(s);
  const text = span < 60 ? `${span}s` : span < 3600 ? `${Math.floor(span / 60)}m` : span < 86400 ? `${Math.floor(span / 3600)}h` : `${Math.floor(span / 86400)}d`;
  if (span < 1) return "just now";
  if (span >= 30 * 86400) return localTime(iso).slice(0, 10);
  return s > 0 ? `${text} ago` : `in ${text}`;
}

/** How long a run took, or has taken so far when it has not ended. */
export function took(started: string | null, ended: string | null, now = Date.now()): string {
  if (!started) return "-";
  return duration(((ended ? Date.parse(ended) : now) - Date.parse(started)) / 1000);
}

/** `2026-08-01 14:03:22` in this machine's zone. */
export function localTime(iso: string | null): string {
  if (!iso) return "-";
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The zone local times are in, said once per view: `Europe/Berlin (UTC+02:00)`. */
export function zoneNote(now = new Date()): string {
  const off = -now.getTimezoneOffset();
  const sign = off < 0 ? "-" : "+";
  const offset = `UTC${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return name && name !== "UTC" ? `${name} (${offset})` : offset;
}
