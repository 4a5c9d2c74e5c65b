import type { AskRequest } from "../../approvals/protocol.js";

/*
 * codex app-server's approval requests as li requests (pure, for the rules of issue 46): a
 * command is recorded as `commandExecution` with the command as the shell will run it in
 * `input.command` (codex's `/bin/bash -lc '…'` unwrapped to its inner command), a patch as
 * `fileChange`. null for any other server request (li answers it with an error).
 */

/*
 * codex 0.171 sends `command` as its argv joined by Rust's shlex 1.3 (`shlex::try_join`): each
 * word a run of bare chunks (`[A-Za-z0-9+./:@\]_-]`), single-quoted chunks (no `'` or `\` inside,
 * `^` only first) and double-quoted chunks (`"`, `\` escaped, never `$`, a backquote or `!` inside), for
 * example `/bin/bash -lc "'npm' test"` or `/bin/bash -lc 'npm test $'"'\x41'"`. Only exactly that
 * form is decoded, each chunk as bash reads it; anything else stays as it came, and a shell in
 * command position sends it to a person (deny rules still look inside `bash -c`).
 * test/approval-routes-table.test.ts checks the decoding against the shell parser for every row.
 */
const CHUNK = /[A-Za-z0-9+./:@\]_-]+|'\^?[^'\\^]*'|"(?:[^"\\$`!^]|\\["\\$`])*"/y;
const SHELL = /^(?:\/(?:usr\/)?bin\/)?(?:bash|sh|zsh) -l?c /;

/** One shlex-quoted word, decoded; null when `text` is not exactly one. */
function shlexWord(text: string): string | null {
  let out = "";
  CHUNK.lastIndex = 0;
  while (CHUNK.lastIndex < text.length) {
    const at = CHUNK.lastIndex;
    const m = CHUNK.exec(text);
    if (!m || m.index !== at) return null;
    const c = m[0];
    out += c[0] === "'" ? c.slice(1, -1) : c[0] === '"' ? c.slice(1, -1).replace(/\\(.)/gs, "$1") : c;
  }
  return text.length ? out : null;
}

/** The script of codex's `/bin/bash -lc WORD`; the command itself when it is not exactly so wrapped. */
export function unwrapShell(command: string): string {
  const m = SHELL.exec(command);
  const inner = m ? shlexWord(command.slice(m[0].length)) : null;
  return inner ?? command;
}

export function requestOf(method: string, params: any): AskRequest | null {
  const id = typeof params?.itemId === "string" ? params.itemId : "";
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  if (method === "item/commandExecution/requestApproval") {
    const command = str(params?.command);
    return {
      tool_name: "commandExecution",
      input: { ...(command !== undefined ? { command: unwrapShell(command), raw_command: command } : {}), ...(str(params?.cwd) ? { cwd: params.cwd } : {}), ...(str(params?.reason) ? { reason: params.reason } : {}) },
      tool_use_id: id,
    };
  }
  if (method === "item/fileChange/requestApproval")
    return { tool_name: "fileChange", input: { ...(str(params?.reason) ? { reason: params.reason } : {}), ...(str(params?.grantRoot) ? { grant_root: params.grantRoot } : {}) }, tool_use_id: id };
  return null;
}
