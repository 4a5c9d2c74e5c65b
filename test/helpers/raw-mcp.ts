import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ignoreEpipe, LI_BIN, ROOT } from "./li.js";

/**
 * A JSON-RPC line client over `li mcp`'s stdio that can send anything, bytes included, and
 * matches answers by id: for the payloads a well-behaved SDK client would never send.
 */
export class RawMcp {
  readonly child: ChildProcess;
  private buf = "";
  private waiting = new Map<string, (msg: any) => void>();
  private nextId = 1;
  stderr = "";
  exited: number | null | undefined = undefined;

  constructor(env: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
    this.child = spawn(process.execPath, [...nodeArgs, LI_BIN, "mcp"], { cwd: ROOT, env: { ...env, NODE_OPTIONS: "" }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      this.buf += d;
      for (let nl; (nl = this.buf.indexOf("\n")) >= 0; ) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const msg = JSON.parse(line);
        const key = JSON.stringify(msg.id ?? null);
        const w = this.waiting.get(key);
        if (w) {
          this.waiting.delete(key);
          w(msg);
        }
      }
    });
    this.child.stderr!.on("data", (d) => (this.stderr = (this.stderr + d).slice(-4000)));
    this.child.on("exit", (code) => (this.exited = code));
    // A server that exited is reported by the answer it never gave (answer() names the exit), not by a write's EPIPE.
    ignoreEpipe(this.child.stdin!);
  }

  async init(): Promise<void> {
    await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } });
    this.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  }

  write(data: string | Buffer): void {
    this.child.stdin!.write(data);
  }

  /** The answer to the message with this id (sent by the caller), or a rejection after `ms`. */
  answer(id: string | number | null, ms = 30000): Promise<any> {
    return new Promise((resolve, reject) => {
      const key = JSON.stringify(id);
      const t = setTimeout(() => {
        this.waiting.delete(key);
        reject(new Error(`no answer to id ${key} within ${ms} ms (server exited: ${this.exited}); stderr: ${this.stderr}`));
      }, ms);
      this.waiting.set(key, (m) => {
        clearTimeout(t);
        resolve(m);
      });
    });
  }

  id(): number {
    return this.nextId++;
  }

  request(method: string, params?: unknown): Promise<any> {
    const id = this.id();
    const answer = this.answer(id);
    this.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) + "\n");
    return answer;
  }

  /** tools/call of the request tool with raw arguments. */
  call(args: unknown): Promise<any> {
    return this.request("tools/call", { name: "request", arguments: args });
  }

  /** Resident memory of the server process, in KiB. */
  rssKiB(): number {
    const status = fs.readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  }

  close(): void {
    this.child.stdin!.end();
    this.child.kill("SIGKILL");
  }
}

/**
 * LI_MCP_COMMAND for a wrapper that logs every li the server starts (argv, start and end
 * times) to `log`, then runs the real li: how a test counts what reached the CLI.
 */
export function loggingLi(dir: string): { command: string; log: string; runs: () => { argv: string[]; start: number; end: number }[] } {
  const log = path.join(dir, "li-calls.jsonl");
  const script = path.join(dir, "logging-li.mjs");
  fs.writeFileSync(
    script,
    `import { spawnSync } from "node:child_process";
import fs from "node:fs";
const argv = process.argv.slice(2);
const start = Date.now();
const r = spawnSync(${JSON.stringify(process.execPath)}, [${JSON.stringify(LI_BIN)}, ...argv], { stdio: "inherit" });
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv, start, end: Date.now() }) + "\\n");
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status ?? 1);
`,
  );
  return {
    command: JSON.stringify([process.execPath, script]),
    log,
    runs: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []),
  };
}
