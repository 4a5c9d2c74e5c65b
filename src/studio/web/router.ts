// Hash routing: #/path?query. The query holds a page's filters, so a reload keeps them.
import { useEffect, useState } from "preact/hooks";

export interface Route { path: string[]; query: URLSearchParams }

export function parseHash(hash: string = location.hash): Route {
  const raw = hash.replace(/^#/, "") || "/";
  const q = raw.indexOf("?");
  const pathPart = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
  const path = pathPart.split("/").filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { path, query };
}

export function hashFor(path: string, query?: URLSearchParams): string {
  const qs = query ? query.toString() : "";
  return `#${path}${qs ? `?${qs}` : ""}`;
}

const ROUTE_EVENT = "li-route";

/** Moves to `hash`; replace keeps the history entry (filters typed into a box). */
export function navigate(hash: string, replace = false): void {
  if (replace) {
    history.replaceState(null, "", hash);
    window.dispatchEvent(new Event(ROUTE_EVENT));
  } else {
    location.hash = hash;
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener("hashchange", on);
    window.addEventListener(ROUTE_EVENT, on);
    return () => {
      window.removeEventListener("hashchange", on);
      window.removeEventListener(ROUTE_EVENT, on);
    };
  }, []);
  return route;
}

export const runHref = (id: string) => `#/runs/${encodeURIComponent(id)}`;
