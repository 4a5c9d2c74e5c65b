import type { Binding } from "./projector.js";

/**
 * Renders validated args to argv: every option as one `--flag=value` token, booleans as the
 * bare flag or its --no- form, server-owned flags, then a literal `--` and the positionals,
 * so no caller value can land in an option position or name another command. An optional
 * positional left out before one that is given renders as an empty argument, never shifting
 * the later value into its place; a command with such a positional reads "" as absent
 * (`li agent [model] [prompt...]`).
 */
export function renderArgv(bindings: Binding[], args: Record<string, unknown>, fixedFlags: readonly string[] = []): string[] {
  const argv: string[] = [];
  const positionals: string[] = [];
  let gaps = 0;
  for (const b of bindings) {
    const v = args[b.prop];
    if (b.kind === "positional") {
      if (v === undefined || (Array.isArray(v) && v.length === 0)) {
        gaps++;
        continue;
      }
      for (; gaps > 0; gaps--) positionals.push("");
      for (const x of Array.isArray(v) ? v : [v]) positionals.push(String(x));
    } else if (v === undefined) {
      continue;
    } else if (b.kind === "flag") {
      const token = v ? b.on : b.off;
      if (token) argv.push(token);
    } else {
      for (const x of Array.isArray(v) ? v : [v]) argv.push(`${b.flag}=${String(x)}`);
    }
  }
  argv.push(...fixedFlags);
  if (positionals.length) argv.push("--", ...positionals);
  return argv;
}

/** Linux caps one argv element at 128 KiB including its NUL. */
export const MAX_ARG_BYTES = 128 * 1024 - 1;

/** The first parameter with a value too long for one argv element once rendered, if any. */
export function oversizedParam(bindings: Binding[], args: Record<string, unknown>): string | undefined {
  for (const b of bindings) {
    const v = args[b.prop];
    if (v === undefined || b.kind === "flag") continue;
    const prefix = b.kind === "option" ? Buffer.byteLength(`${b.flag}=`) : 0;
    if ((Array.isArray(v) ? v : [v]).some((x) => prefix + Buffer.byteLength(String(x)) > MAX_ARG_BYTES)) return b.prop;
  }
  return undefined;
}
