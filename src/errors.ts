/** The error kinds of the li.result contract. */
export type ErrorKind = "invalid_input" | "not_found" | "conflict" | "unavailable" | "internal";

/** A failure with a contract kind; the CLI adapter renders it, nothing else formats errors. */
export class LiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "LiError";
  }
}

export const invalid = (message: string, detail: Record<string, unknown> = {}) =>
  new LiError("invalid_input", message, detail);

/** Caller text an error quotes is bounded: a 5,000-character name is not echoed whole. */
const ECHO_CHARS = 64;

/** The first 64 characters of `text`, never half a surrogate pair. */
const head = (text: string): string => text.slice(0, /[\uD800-\uDBFF]/.test(text[ECHO_CHARS - 1]) ? ECHO_CHARS - 1 : ECHO_CHARS);

/** `text` cut to its first 64 characters, marked when cut: what a refusal's detail carries. */
export const clipped = (text: string): string => (text.length <= ECHO_CHARS ? text : `${head(text)}…`);

/** `text` quoted for a message: whole when short, else its first 64 characters and its length. */
export const quoted = (text: string): string => (text.length <= ECHO_CHARS ? JSON.stringify(text) : `${JSON.stringify(head(text))}… (${text.length} characters)`);
