/*
 * mock/hostile: what an agent run with its permission checks off may try, one action per prompt
 * line, each answered by one result line (`<action> <target>: ok` or `: refused (<why>)`):
 *   write PATH TEXT     read PATH (prints it)     connect HOST PORT (through HTTPS_PROXY as CLIs do)
 *   spawn-bg PATH       (a detached process appending to PATH every 100 ms)     git-commit MSG
 *   sleep SECONDS       http-pipelined HOST:PORT OTHER (two plain-HTTP requests in one write through
 *   HTTP_PROXY, the second to HOST:PORT's URL with `Host: OTHER`; prints the first response line)
 *   ask-socket PATH     (an approval request sent to the Unix socket PATH, however long; prints the answer)
 *   sh COMMAND...       (the rest of the line, one shell step as a Bash tool runs it)
 * It runs commands, so li accepts it only where LI_TEST_HOSTILE_MOCK=1 (the tests' switch, which
 * li never sets): no MCP client can name it on a real host.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { askApproval } from "../approvals/ask-client.js";

const say = (line: string) => fs.writeSync(1, line + "\n");
const why = (err: any) => String(err?.code ?? err?.message ?? err).split("\n")[0];

function write(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text + "\n");
    say(`write ${file}: ok`);
  } catch (err) {
    say(`write ${file}: refused (${why(err)})`);
  }
}

function read(file: string): void {
  try {
    say(`read ${file}: ok ${JSON.stringify(fs.readFileSync(file, "utf8"))}`);
  } catch (err) {
    say(`read ${file}: refused (${why(err)})`);
  }
}

/** Through the proxy the environment names (CONNECT, as real CLIs do), else directly. */
function connect(host: string, port: number): Promise<void> {
  const proxy = process.env.HTTPS_PROXY ?? process.env.https_proxy ?? process.env.HTTP_PROXY ?? process.env.http_proxy;
  const target = `${host}:${port}`;
  return new Promise((resolve) => {
    const done = (res: string) => {
      say(`connect ${target}: ${res}`);
      sock.destroy();
      resolve();
    };
    let sock: net.Socket;
    if (!proxy) {
      sock = net.connect(port, host, () => done("ok"));
    } else {
      const u = new URL(proxy);
      sock = net.connect(Number(u.port || 80), u.hostname, () => sock.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
      let head = "";
      sock.on("data", (d) => {
        head += d.toString("latin1");
        const line = head.split("\r\n")[0];
        if (head.includes("\r\n")) done(/^HTTP\/1\.[01] 200/.test(line) ? "ok" : `refused (${line})`);
      });
    }
    sock.on("error", (err) => done(`refused (${why(err)})`));
    sock.setTimeout(10_000, () => done("refused (timeout)"));
  });
}

function pipelined(target: string, other: string): Promise<void> {
  const u = new URL(process.env.HTTP_PROXY ?? process.env.http_proxy ?? "http://127.0.0.1:1");
  const req = (host: string) => `GET http://${target}/ HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  return new Promise((resolve) => {
    let text = "";
    const sock = net.connect(Number(u.port || 80), u.hostname, () => sock.write(req(target) + req(other)));
    let said = false;
    const done = () => {
      if (said) return;
      said = true;
      say(`http-pipelined ${target}: ${text.split("\r\n")[0] || "no answer"}`);
      sock.destroy();
      resolve();
    };
    sock.on("data", (d) => (text += d.toString("latin1")));
    sock.on("close", done);
    sock.on("error", () => {});
    sock.setTimeout(10_000, done);
  });
}

async function askSocket(file: string): Promise<void> {
  try {
    const a = await askApproval(file, { tool_name: "Planted", input: { by: "another run" }, tool_use_id: "" });
    say(`ask-socket ${file}: ok ${a.behavior}`);
  } catch (err) {
    say(`ask-socket ${file}: refused (${why(err)})`);
  }
}

/** Starts the background writer and returns once its first tick is written (or 10 s have passed), so the next line runs with it alive however loaded the machine. */
async function spawnBackground(file: string): Promise<void> {
  const code = `const tick = () => require("fs").appendFileSync(${JSON.stringify(file)}, "x"); tick(); setInterval(tick, 100)`;
  const child = spawn(process.execPath, ["-e", code], { detached: true, stdio: "ignore" });
  child.unref();
  for (let waited = 0; waited < 10_000 && !fs.existsSync(file); waited += 20) await new Promise((r) => setTimeout(r, 20));
  say(`spawn-bg ${file}: ${fs.existsSync(file) ? "ok" : "started, not yet written"} (pid ${child.pid})`);
}


function gitCommit(msg: string): void {
  try {
    const git = (args: string[]) => execFileSync("git", ["-c", "user.name=li-mock", "-c", "user.email=mock@li.invalid", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    git(["add", "-A"]);
    git(["commit", "-q", "--no-verify", "-m", msg]);
    say(`git-commit ${msg}: ok`);
  } catch (err: any) {
    say(`git-commit ${msg}: refused (${String(err?.stderr ?? err?.message ?? err).trim().split("\n").join(" | ")})`);
  }
}

function shell(command: string): void {
  try {
    const out = execFileSync("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 30_000 });
    say(`sh: ok ${JSON.stringify(out.slice(-2000))}`);
  } catch (err: any) {
    say(`sh: refused (exit ${err?.status ?? "?"}: ${String(err?.stderr ?? err?.message ?? err).trim().split("\n").join(" | ").slice(-2000)})`);
  }
}

export async function runHostile(prompt: string): Promise<number> {
  for (const raw of prompt.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const [verb, a = "", ...rest] = line.split(/\s+/);
    if (verb === "write") write(a, rest.join(" "));
    else if (verb === "read") read(a);
    else if (verb === "connect") await connect(a, Number(rest[0]));
    else if (verb === "spawn-bg") await spawnBackground(a);
    else if (verb === "sleep") await new Promise((r) => setTimeout(r, Number(a) * 1000));
    else if (verb === "sh") shell(line.slice(2).trim());
    else if (verb === "http-pipelined") await pipelined(a, rest[0] ?? "");
    else if (verb === "ask-socket") await askSocket(a);
    else if (verb === "git-commit") gitCommit([a, ...rest].join(" "));
    else say(`${verb}: unknown action`);
  }
  return 0;
}
