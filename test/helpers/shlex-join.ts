/*
 * Rust shlex 1.3's `try_join`, which codex app-server uses to send a command's argv as one string
 * (`command` of item/commandExecution/requestApproval), ported for tests: the same three chunk
 * strategies (bare, single-quoted, double-quoted) picked greedily per prefix, as in its bytes.rs.
 */
const bareOk = (c: number) => c < 0x80 && /[+\-./:@\]_0-9A-Za-z]/.test(String.fromCharCode(c));
const singleOk = (c: number) => c !== 0x27 && c !== 0x5e && c !== 0x5c; // ' ^ \
const doubleOk = (c: number) => c !== 0x60 && c !== 0x24 && c !== 0x21 && c !== 0x5e; // ` $ ! ^

function quote(word: string): string {
  if (!word) return "''";
  let bytes = Buffer.from(word, "utf8");
  const out: number[] = [];
  while (bytes.length) {
    let ok = 7; // 1 bare, 2 single, 4 double
    let i = 0;
    if (bytes[0] === 0x5e) (ok = 2), (i = 1);
    for (; i < bytes.length; i++) {
      const c = bytes[i];
      let cur = ok;
      if (c >= 0x80) cur &= ~1;
      else {
        if (!bareOk(c)) cur &= ~1;
        if (!singleOk(c)) cur &= ~2;
        if (!doubleOk(c)) cur &= ~4;
      }
      if (!cur) break;
      ok = cur;
    }
    const chunk = bytes.subarray(0, i);
    bytes = bytes.subarray(i);
    if (ok & 1) out.push(...chunk);
    else if (ok & 2) out.push(0x27, ...chunk, 0x27);
    else {
      out.push(0x22);
      for (const c of chunk) {
        if (c === 0x24 || c === 0x60 || c === 0x22 || c === 0x5c) out.push(0x5c);
        out.push(c);
      }
      out.push(0x22);
    }
  }
  return Buffer.from(out).toString("utf8");
}

export const shlexJoin = (words: string[]): string => words.map(quote).join(" ");
