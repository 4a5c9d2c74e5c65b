import type { AskRequest } from "../../approvals/protocol.js";

/*
 * codex app-server's approval requests as li requests (pure, for the rules of issue 46): a
 * command is recorded as `commandExecution` with the command as the shell will run it in
 * `input.command` (codex's `/bin/bash -lc '…'` unwrapped to its inner command), a patch as
 * `fileChange`. null for any other server request (li answers it with an error).
 */

const WRAPPED = /^(?:\/(?:usr\/)?bin\/)?(?:bash|sh|zsh)\s+-l?c\s+'((?:[^']|'\\'')*)'$/s;

/** The inner command of `bash -lc '…'`; the command itself when it is not so wrapped. */
export function unwrapShell(command: string): string {
  const m = WRAPPED.exec(command.trim());
  return m ? m[1].split("'\\''").join("'") : command;
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
