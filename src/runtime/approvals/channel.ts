import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { listenUnix } from "../unix-socket.js";
import { APPROVAL_SOCKET_FILE, MAX_REQUEST_BYTES, parseRequest, type AskAnswer, type AskRequest } from "./protocol.js";

/*
 * The worker's end of the ask channel (protocol.ts): a Unix socket in the run's directory, mode
 * 0600 (the directory is the person's own too, 0700; never a shared one, however long its path:
 * unix-socket.ts), answering each connection's one request with
 * what `decide` resolves. A malformed request is denied with the reason, never left hanging.
 */

export interface Channel {
  path: string;
  close(): Promise<void>;
}

export async function openChannel(runDir: string, decide: (req: AskRequest) => Promise<AskAnswer>, log: (text: string) => void): Promise<Channel> {
  const socketPath = path.join(runDir, APPROVAL_SOCKET_FILE);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => {});
    let buf = "";
    let taken = false;
    const reply = (a: AskAnswer) => {
      if (!sock.destroyed) sock.end(JSON.stringify(a) + "\n");
    };
    sock.setEncoding("utf8");
    sock.on("data", (chunk: string) => {
      if (taken) return;
      buf += chunk;
      if (buf.length > MAX_REQUEST_BYTES) {
        taken = true;
        return reply({ behavior: "deny", message: `li: the request is over ${MAX_REQUEST_BYTES} bytes` });
      }
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      taken = true;
      let req: AskRequest | string;
      try {
        req = parseRequest(JSON.parse(buf.slice(0, nl)));
      } catch {
        req = "the request is not JSON";
      }
      if (typeof req === "string") return reply({ behavior: "deny", message: `li: malformed approval request: ${req}` });
      decide(req).then(reply, (err: any) => {
        // Never allow on a failure of li's own: the safe answer is a denial that says why.
        log(`approval request for ${req.tool_name} failed: ${err?.message ?? err}`);
        reply({ behavior: "deny", message: `li could not decide this request: ${err?.message ?? err}` });
      });
    });
  });
  await listenUnix(server, socketPath);
  server.unref();
  return {
    path: socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
        try {
          fs.unlinkSync(socketPath);
        } catch {}
      }),
  };
}
