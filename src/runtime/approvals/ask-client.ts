import { connectUnix } from "../unix-socket.js";
import type { AskAnswer, AskRequest } from "./protocol.js";

export type { AskAnswer, AskRequest } from "./protocol.js";
export type Answer = AskAnswer;

/**
 * Asks the worker at `socketPath` (LI_APPROVAL_SOCKET) and resolves with its one answer, however
 * long a person takes. Rejects when the connection fails or closes without an answer: a caller
 * must then treat the request as denied.
 */
export function askApproval(socketPath: string, req: AskRequest): Promise<AskAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connectUnix(socketPath);
    let buf = "";
    let done = false;
    sock.setEncoding("utf8");
    sock.on("connect", () => sock.write(JSON.stringify(req) + "\n"));
    sock.on("data", (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf("\n");
      if (nl < 0 || done) return;
      done = true;
      sock.end();
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as AskAnswer);
      } catch (err) {
        reject(new Error(`the approval answer is not JSON: ${buf.slice(0, 200)}`));
      }
    });
    sock.on("error", (err) => {
      if (!done) (done = true), reject(err);
    });
    sock.on("close", () => {
      if (!done) (done = true), reject(new Error("the approval channel closed without an answer"));
    });
  });
}
