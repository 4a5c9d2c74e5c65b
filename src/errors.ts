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
