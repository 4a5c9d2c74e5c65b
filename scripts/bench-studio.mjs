#!/usr/bin/env node
// li studio's costs, each as a ratio to a baseline measured in the same run (machines are noisy):
// start-up to a printed URL against `node -e 0`, and an /api/runs round trip against the same
// request to a bare node:http server answering the same bytes. Usage: npm run bench:studio [-- --runs N]
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const li = path.join(root, "bin", "li.js");
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 21;
const home = fs.mkdtempSync(path.join(os.tmpdir(), "li-bench-studio-"));
const env = { ...process.env, LI_HOME: home, NODE_OPTIONS: "" };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;

for (let i = 0; i < 20; i++) execFileSync(process.execPath, [li, "agent", "--detach", "mock/echo", `bench ${i}`], { env, stdio: "ignore" });
execFileSync(process.execPath, [li, "wait", "--all-active"], { env, stdio: "ignore" });

function startStudio() {
  const t = process.hrtime.bigint();
  const child = spawn(process.execPath, [li, "--machine", "studio", "--port", "0"], { env, stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve({ child, ms: ms(t), ...JSON.parse(out).data });
    });
  });
}

function get(port, p, headers = {}) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    http.get({ host: "127.0.0.1", port, path: p, headers, agent: false }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => (res.statusCode === 200 ? resolve({ ms: ms(t), body }) : reject(new Error(`${p}: ${res.statusCode} ${body}`))));
    }).on("error", reject);
  });
}

const base = [];
const starts = [];
for (let i = 0; i < Math.min(RUNS, 11); i++) {
  const t = process.hrtime.bigint();
  spawnSync(process.execPath, ["-e", "0"]);
  base.push(ms(t));
  const s = await startStudio();
  starts.push(s.ms);
  s.child.kill("SIGTERM");
}

const s = await startStudio();
const token = new URL(s.url).searchParams.get("token");
const headers = { Cookie: `li_studio_${s.port}=${token}`, "X-Li-Key": new URL(s.url).hash.replace(/^#key=/, "") };
const sample = (await get(s.port, "/api/runs", headers)).body;
const bare = http.createServer((_req, res) => res.end(sample));
await new Promise((r) => bare.listen(0, "127.0.0.1", r));
const barePort = bare.address().port;
const api = [];
const raw = [];
for (let i = 0; i < RUNS * 5; i++) {
  raw.push((await get(barePort, "/")).ms);
  api.push((await get(s.port, "/api/runs", headers)).ms);
}
s.child.kill("SIGTERM");
bare.close();
fs.rmSync(home, { recursive: true, force: true });

console.log(`runs: ${RUNS}; medians in ms\n`);
const rows = [
  ["li studio start to printed URL", median(starts), median(base), "node -e 0"],
  ["GET /api/runs (20 runs, " + Buffer.byteLength(sample) + " B)", median(api), median(raw), "bare node:http, same bytes"],
];
for (const [name, m, b, what] of rows) console.log(`${name.padEnd(42)} ${m.toFixed(1).padStart(7)} ms  ${(m / b).toFixed(2)}x of ${what} (${b.toFixed(1)} ms)`);
