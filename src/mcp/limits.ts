/** The documented batch cap: at most this many ops per call. */
export const MAX_OPS = 8;
