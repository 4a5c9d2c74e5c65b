// Ages and durations, worked out here against the session's clock.
import { useEffect, useState } from "preact/hooks";
import { serverNow } from "./api";

const pad = (n: number) => String(n).padStart(2, "0");

/** A span in milliseconds, short: 850ms, 1.2s, 3m 04s, 1h 02m, 2d 03h. */
export function duration(ms: number): string {
  if (ms < 0) ms = 0;
  if (ms < 100) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const total = Math.floor(s);
  const m = Math.floor(total / 60);
  if (m < 60) return `${m}m ${pad(total % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${pad(m % 60)}m`;
  return `${Math.floor(h / 24)}d ${pad(h % 24)}h`;
}

/** The coarse form: 3s, 4m, 2h, 5d. */
function coarse(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** "3s ago", or "in 3m" for a time still to come. */
export function age(iso: string, now: number = serverNow()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = now - t;
  return d >= -500 ? `${coarse(d)} ago` : `in ${coarse(d)}`;
}

/** Re-renders its user every second, so the ages it shows move on. */
export function useNow(): number {
  const [now, setNow] = useState(serverNow());
  useEffect(() => {
    const t = setInterval(() => setNow(serverNow()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}
