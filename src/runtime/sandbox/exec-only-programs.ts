import fs from "node:fs";
import path from "node:path";
import { which } from "../on-path.js";

/*
 * Which programs a workspace sandbox makes non-dumpable (exec-only.ts): the processes that hold
 * what the record rests on or what answers the provider. node (the worker's, which runs li's own
 * helpers inside: the mock providers, the ACP and codex app-server clients, claude's prompt tool;
 * and the one on the provider's PATH, which `#!/usr/bin/env node` CLIs run on), strace (the
 * recorder), and the provider's own binary when it is native code (claude's Bun binary, codex's
 * Rust one behind its node launcher). Not socat: the bridges to li's proxy and gateway run outside
 * the sandbox (bridges.ts), and nothing of li's inside runs it. The agent's tools (a shell, python,
 * git, socat, …) are not among them: they stay as the agent runs them.
 */

/** The first bytes of `file`: an ELF binary, a `#!` script's interpreter, or neither. */
function kindOf(file: string): { elf: true } | { interpreter: string[] } | null {
  let head: Buffer;
  try {
    const fd = fs.openSync(file, "r");
    try {
      head = Buffer.alloc(256);
      head = head.subarray(0, fs.readSync(fd, head, 0, 256, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  if (head.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return { elf: true };
  if (head.subarray(0, 2).toString("latin1") !== "#!") return null;
  return { interpreter: head.toString("latin1").slice(2).split("\n")[0].trim().split(/\s+/) };
}

/** codex's npm launcher (bin/codex.js) runs a native binary from its platform package's vendor folder. */
function codexNative(launcher: string): string[] {
  const pkg = path.dirname(path.dirname(launcher));
  const roots = [path.join(pkg, "vendor"), path.join(pkg, "node_modules", "@openai"), path.dirname(pkg)].flatMap((r) => {
    try {
      return r.endsWith("vendor") ? [r] : fs.readdirSync(r).filter((n) => n.startsWith("codex-")).map((n) => path.join(r, n, "vendor"));
    } catch {
      return [];
    }
  });
  const found: string[] = [];
  for (const v of roots) {
    let triples: string[] = [];
    try {
      triples = fs.readdirSync(v);
    } catch {}
    for (const t of triples) for (const f of [path.join(v, t, "bin", "codex"), path.join(v, t, "codex", "codex")]) if (fs.existsSync(f)) found.push(f);
  }
  return found;
}

/** A program and, for a script, what runs it; only what exists, by real path. */
function resolve(bin: string, pathVar: string | undefined, depth = 0): string[] {
  const at = which(bin, pathVar);
  if (!at || depth > 2) return [];
  const real = fs.realpathSync(at);
  const k = kindOf(real);
  if (!k) return [];
  if ("elf" in k) return [real];
  const [interp, arg] = k.interpreter;
  const inner = path.basename(interp) === "env" && arg ? resolve(arg, pathVar, depth + 1) : resolve(interp, pathVar, depth + 1);
  return [...inner, ...(path.basename(real) === "codex.js" ? codexNative(real) : [])];
}

/** `bin` and, for a script, what runs it, by real path; never a shell (a provider given as a script run by sh or bash: the shell stays as it is). */
export function programsOf(bin: string, pathVar: string | undefined): string[] {
  return [...new Set(resolve(bin, pathVar).map((p) => fs.realpathSync(p)))].filter((p) => !/^(ba|da|z|k)?sh$/.test(path.basename(p)));
}

/** The programs to make non-dumpable for a run of `argv` (its provider `provider`), with `pathVar` the sandbox's PATH. */
export function sandboxPrograms(argv: string[], provider: string, pathVar: string | undefined): string[] {
  const bins = [process.execPath, "node", "strace", argv[0], provider.split("/")[0]];
  return [...new Set(bins.flatMap((b) => programsOf(b, pathVar)))];
}
