// What the benchmark scripts share: the li under test, a throw-away LI_HOME, the --runs argument,
// medians; and for li studio, starting it, one GET, and a read timed against a bare node:http server
// sending the same bytes (the baseline, measured interleaved in the same run).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const li = path.join(root, "bin", "li.js");

/** A numeric command-line option, `--name N`, else `dflt`. */
export function numberArg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** A fresh LI_HOME and the environment that points li at it. */
export function benchHome(prefix) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { home, env: { ...process.env, LI_HOME: home, NODE_OPTIONS: "" } };
}

const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.9) - 1)];

/** Runs a command to its end; its stdout, or an error naming it when its exit status is not in `ok`. */
export function runChecked(cmd, args, opts, ok = [0]) {
  const r = spawnSync(cmd, args, { stdio: ["pipe", "pipe", "pipe"], maxBuffer: 1 << 28, ...opts });
  if (!ok.includes(r.status)) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** How long `fn` took, in ms. */
export function timeSync(fn) {
  const t = process.hrtime.bigint();
  fn();
  return ms(t);
}

/** The rows of a timed table: name, median and p90 in ms, and the median as a ratio to `node -e 0`'s. */
export function printRows(rows, node) {
  for (const [name, med, p] of rows)
    console.log(`${name.padEnd(42)} ${med.toFixed(1).padStart(8)} ms  p90 ${p.toFixed(1).padStart(8)} ms  ${(med / node).toFixed(2).padStart(6)}x node -e 0`);
}

/** `li --machine studio --port 0` on `env`; resolves once it printed its URL, with the headers the page sends. */
export function startStudio(li, env) {
  const t = process.hrtime.bigint();
  const child = spawn(process.execPath, [li, "--machine", "studio", "--port", "0"], { env, stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (!out.includes("\n")) return;
      const { url, port } = JSON.parse(out).data;
      const u = new URL(url);
      const headers = { Cookie: `li_studio_${port}=${u.searchParams.get("token")}`, "X-Li-Key": u.hash.replace(/^#key=/, "") };
      resolve({ child, ms: ms(t), url, port, headers });
    });
  });
}

/** One GET on a fresh connection: its time and body; anything but a 200 fails the benchmark. */
export function get(port, p, headers = {}) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    http.get({ host: "127.0.0.1", port, path: p, headers, agent: false }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => (res.statusCode === 200 ? resolve({ ms: ms(t), body }) : reject(new Error(`${p}: ${res.statusCode} ${body}`))));
    }).on("error", reject);
  });
}

/** The studio's GET of `p` against a bare server sending the same bytes, `n` interleaved pairs: medians and size. */
export async function versusBare(studio, p, n) {
  const body = (await get(studio.port, p, studio.headers)).body;
  const bare = http.createServer((_req, res) => res.end(body));
  await new Promise((r) => bare.listen(0, "127.0.0.1", r));
  const a = [];
  const b = [];
  for (let i = 0; i < n; i++) {
    b.push((await get(bare.address().port, "/")).ms);
    a.push((await get(studio.port, p, studio.headers)).ms);
  }
  bare.close();
  return { ms: median(a), bare: median(b), bytes: Buffer.byteLength(body) };
}
