// The page key. It arrives in the printed URL's #fragment, which no browser sends to any server.
// It is kept in this origin's localStorage, which is per port, unlike a cookie, which every port
// of 127.0.0.1 receives. It goes back only with the API requests: as the X-Li-Key header, or as a
// query parameter for an EventSource.
const STORE = "li-studio-key";

/** Takes the key out of the address bar (and the history) into storage; call before the first render. */
export function adoptKeyFromUrl(): void {
  const m = /^#key=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return;
  try {
    localStorage.setItem(STORE, m[1]);
  } catch {
    /* storage refused: the page answers with the no-key banner */
  }
  history.replaceState(null, "", `${location.pathname}#/`);
}

export function pageKey(): string {
  try {
    return localStorage.getItem(STORE) ?? "";
  } catch {
    return "";
  }
}

/** `url` with the key as a query parameter, for an EventSource (which cannot send headers). */
export const withKey = (url: string): string => `${url}${url.includes("?") ? "&" : "?"}key=${encodeURIComponent(pageKey())}`;
