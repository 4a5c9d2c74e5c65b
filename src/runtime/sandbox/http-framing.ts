/*
 * Where one HTTP/1.1 request ends, for the proxy's plain-HTTP path: what follows it on the same
 * connection is another request, which the proxy must check too (a pipelined request may name
 * another host). A head's framing is Content-Length or chunked; both at once, several lengths or
 * an unknown transfer coding is refused (the upstream could frame it otherwise: smuggling).
 */

export interface Head {
  method: string;
  target: string;
  version: string;
  /** Header lines as sent, `Name: value`. */
  headers: string[];
}

/** The request line and headers of `text` (a head without its blank line), or why it is not one. */
export function parseHead(text: string): Head | string {
  const [line, ...headers] = text.split("\r\n");
  const m = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(line);
  if (!m) return "a malformed request line";
  if (headers.some((h) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(h))) return "a malformed header";
  // A bare LF or CR ends a line for many servers: a header hidden behind one (a Transfer-Encoding)
  // would frame the body otherwise upstream, and smuggle a request the proxy never checked.
  if (headers.some((h) => /[\x00-\x08\x0a-\x1f\x7f]/.test(h))) return "a control character in a header (a bare LF or CR)";
  return { method: m[1], target: m[2], version: m[3], headers };
}

export const headerValues = (h: Head, name: string): string[] =>
  h.headers.filter((l) => l.slice(0, l.indexOf(":")).toLowerCase() === name).map((l) => l.slice(l.indexOf(":") + 1).trim());

/** Counts a request body's bytes as they pass; `feed` returns how many of `d` belong to it (the rest is the next request). */
export class BodyEnd {
  private left: number;
  private chunked: boolean;
  /** Chunked: the bytes of the current size or trailer line seen so far. */
  private line = "";
  private state: "size" | "data" | "crlf" | "trailer" | "done";

  private constructor(length: number, chunked: boolean) {
    this.left = length;
    this.chunked = chunked;
    this.state = chunked ? "size" : length > 0 ? "data" : "done";
  }

  /** The body's framing for `h`, or why it cannot be trusted. */
  static of(h: Head): BodyEnd | string {
    const te = headerValues(h, "transfer-encoding");
    const cl = headerValues(h, "content-length");
    if (te.length && cl.length) return "both Transfer-Encoding and Content-Length";
    if (te.length) {
      if (te.join(",").toLowerCase().replace(/\s/g, "") !== "chunked") return `the transfer coding ${te.join(", ")}`;
      return new BodyEnd(0, true);
    }
    if (cl.length > 1 || (cl.length && !/^\d{1,15}$/.test(cl[0]))) return "a malformed Content-Length";
    return new BodyEnd(cl.length ? Number(cl[0]) : 0, false);
  }

  get done(): boolean {
    return this.state === "done";
  }

  /** How many bytes of `d` are this body's; -1 when the chunked framing is malformed. */
  feed(d: Buffer): number {
    let i = 0;
    while (i < d.length && this.state !== "done") {
      if (this.state === "data") {
        const n = Math.min(this.left, d.length - i);
        i += n;
        this.left -= n;
        if (this.left === 0) this.state = this.chunked ? "crlf" : "done";
        continue;
      }
      // size, crlf and trailer lines end in CRLF.
      const nl = d.indexOf(0x0a, i);
      const end = nl < 0 ? d.length : nl + 1;
      this.line += d.subarray(i, end).toString("latin1");
      i = end;
      if (this.line.length > 4096) return -1;
      if (nl < 0) break;
      const line = this.line.replace(/\r?\n$/, "");
      this.line = "";
      if (this.state === "crlf") {
        if (line !== "") return -1;
        this.state = "size";
      } else if (this.state === "size") {
        const m = /^([0-9a-fA-F]{1,12})(?:;.*)?$/.exec(line);
        if (!m) return -1;
        this.left = parseInt(m[1], 16);
        this.state = this.left === 0 ? "trailer" : "data";
      } else if (line === "") this.state = "done"; // trailer lines, then a blank one
    }
    return i;
  }
}
