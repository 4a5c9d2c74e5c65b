import fs from "node:fs";
import { crypto } from "../packages.js";

// Crockford base32, lower-cased: sorts the same as the time it encodes.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export const KIND_PREFIX = {
  invocation: "inv",
  session: "ses",
  play: "ply",
  delivery: "dlv",
  schedule: "sch",
  schedule_run: "srn",
  team: "tm",
  message: "msg",
  kill_request: "krq",
  apply: "apl",
  approval: "apr",
} as const;

export type IdKind = keyof typeof KIND_PREFIX;

let lastTime = 0;
let lastRandom: number[] = [];

/** `<prefix>_<10 chars of ms time><16 random chars>`; monotonic within one process. */
export function newId(kind: IdKind, now = Date.now()): string {
  let random: number[];
  if (now <= lastTime && lastRandom.length) {
    now = lastTime;
    random = increment(lastRandom);
  } else {
    random = [...randomBytes16()].map((b) => b & 31);
  }
  lastTime = now;
  lastRandom = random;
  return `${KIND_PREFIX[kind]}_${encodeTime(now)}${random.map((d) => ALPHABET[d]).join("")}`;
}

/*
 * From the kernel's random device, which needs only node:fs (loaded by every li process): loading
 * node:crypto for 16 bytes was 6-15 ms of every command that records something. node:crypto where
 * there is no such device or it answers short.
 */
function randomBytes16(): Uint8Array {
  const out = new Uint8Array(16);
  try {
    const fd = fs.openSync("/dev/urandom", "r");
    try {
      if (fs.readSync(fd, out, 0, 16, null) === 16) return out;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // no device here: node:crypto below
  }
  return crypto().randomBytes(16);
}

function encodeTime(ms: number): string {
  let time = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time;
}

/** An id of the real shape for messages (time now, a made-up random part): never a real record's. */
export function exampleId(kind: IdKind, now = Date.now()): string {
  return `${KIND_PREFIX[kind]}_${encodeTime(now)}${"k3f0x9q8mzt4wd7r"}`;
}

function increment(digits: number[]): number[] {
  const out = [...digits];
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] < 31) {
      out[i]++;
      return out;
    }
    out[i] = 0;
  }
  return out;
}

/** A whole id of one of `kinds`, as newId makes them (no prefix, no alias): for callers that take ids only in full. */
export function fullIdPattern(...kinds: IdKind[]): RegExp {
  return new RegExp(`^(${kinds.map((k) => KIND_PREFIX[k]).join("|")})_[${ALPHABET}]{26}$`);
}

/** An id or id prefix as a user may type it: lower-case letters, digits, one underscore. */
export const ID_PREFIX_PATTERN = /^[a-z0-9]{1,3}(_[0-9a-z]{0,26})?$/;

export function isWellFormedPrefix(text: string): boolean {
  return text.length > 0 && ID_PREFIX_PATTERN.test(text);
}
