/*
 * An OpenAI model call's request, as the gateway must see it before it goes upstream
 * (docs/gateway.md). Two requests would be served and billed with no usage in their answer: a
 * streamed chat (or legacy) completion without `stream_options.include_usage` (the API then sends
 * no usage chunk), and a background response (its answer says `queued`, and the usage comes later
 * from a GET the gateway forwards as a read). The first is given `include_usage`, so it is metered;
 * the second is refused. The body is held whole to be read, up to MAX_BODY: past that it is
 * refused, since one padded past any bound would otherwise go upstream unread.
 */

export const MAX_BODY = 64 * 1024 * 1024;

/** The body to send upstream, or why the call is refused. */
export function openaiBody(pathname: string, body: Buffer): { body: Buffer } | { refuse: string } {
  let j: any;
  try {
    j = JSON.parse(body.toString("utf8"));
  } catch {
    j = null;
  }
  // Only a JSON object is read the same way upstream: a lenient parser could find a field in what
  // JSON.parse refuses.
  if (!j || typeof j !== "object" || Array.isArray(j)) return { refuse: "a model call's body must be one JSON object" };
  if (/\/responses\/?$/.test(pathname)) {
    if (j.background !== undefined && j.background !== false && j.background !== null) return { refuse: "a background response is answered later through a read the gateway does not meter; call without background" };
  } else if (j.stream !== undefined && j.stream !== false && j.stream !== null) {
    const so = j.stream_options && typeof j.stream_options === "object" && !Array.isArray(j.stream_options) ? j.stream_options : {};
    j.stream_options = { ...so, include_usage: true };
  }
  // Sent as read: a field named twice (`"background": true` before `false`) would be read as the
  // first by an upstream whose parser keeps the first.
  return { body: Buffer.from(JSON.stringify(j)) };
}
