import { li, liData, tempHome } from "./helpers/li.js";
import { prng } from "./helpers/prng.js";
import { apiGet, readyHang, request, startStudio, type StudioProc } from "./helpers/studio.js";

/*
 * Seeded hostile requests at li studio: odd methods, paths, escapes, queries, headers and bodies,
 * with and without the session's credentials. Every answer must be a 2xx or a 4xx with a JSON
 * error (never a 5xx, never a reset), the server must keep answering, and nothing may change:
 * a run it could have been tricked into killing is still running afterwards.
 * LI_FUZZ_SEED replays a run; LI_FUZZ_COUNT changes its size.
 */
const SEED = Number(process.env.LI_FUZZ_SEED ?? Date.now() % 1e9);
const COUNT = Number(process.env.LI_FUZZ_COUNT ?? 1500);

const h = tempHome();
let s: StudioProc;
let hang: { id: string };

beforeAll(async () => {
  console.log(`studio-fuzz seed ${SEED} (replay with LI_FUZZ_SEED=${SEED}), ${COUNT} requests`);
  s = await startStudio(h.env);
  // A budget covering every run, so a run's page reads its charges too.
  await liData(["budget", "set", "fuzz", "--limit-tokens", "1000000", "--scope", "all"], { env: h.env });
  await liData(["agent", "mock/echo", "a record to read"], { env: h.env });
  hang = await readyHang(h);
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await li(["kill", "--grace", "0", hang.id], { env: h.env });
  h.cleanup();
});

test("hostile requests get clear 4xx answers, the server survives, and nothing changes", async () => {
  const rnd = prng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const junk = () => pick(["", "%00", "%ff%fe", "..", "%2e%2e%2f", "😀", "\u202e", "a".repeat(Math.floor(rnd() * 3000)), "inv_" + "z".repeat(26), hang.id.slice(0, -1), "@last", "-", "--help", "'; DROP TABLE entities; --", "%E0%A4%A", "null", "[]", "{}"]);
  const events = (await apiGet(s, `/api/runs/${hang.id}`)).events.length;
  const ROUTES = ["/", "/app.js", "/app.css", "/api/session", "/api/runs", "/api/runs/X", "/api/runs/X/graph", "/api/runs/X/console", "/api/runs/X/change", "/api/runs/X/patch", "/diff.js", "/diff.css", "/api/schedules", "/api/teams", "/api/teams/X", "/api/budgets", "/api/budgets/X", "/api/outbox", "/api/actions", "/X", "/api/X", "//api/runs", "/api/runs/X/X/X"];
  const QUERY = ["status", "kind", "label", "steps", "cursor", "limit", "offset", "max", "token", "key"];
  const bodies = () =>
    pick([
      junk(),
      "[".repeat(Math.floor(rnd() * 4000)),
      JSON.stringify({ action: pick(["kill", "rerun", "state.migrate", "hooks.trust", "clean", "", "__proto__", "constructor", "toString"]), target: junk() }),
      JSON.stringify({ action: "kill", target: hang.id, extra: junk() }),
      JSON.stringify({ action: "kill", target: [hang.id] }),
      JSON.stringify({ __proto__: { action: "kill" }, target: hang.id }),
      JSON.stringify({ action: "kill", target: `${hang.id} --grace 0` }),
      JSON.stringify({ action: "kill", target: hang.id.toUpperCase() }),
      "x".repeat(Math.floor(rnd() * 20000)),
    ]);
  const statuses = new Map<number, number>();
  for (let i = 0; i < COUNT; i++) {
    const route = pick(ROUTES).replace(/X/g, () => encodeURIComponent(junk()).slice(0, 200));
    const query = Array.from({ length: Math.floor(rnd() * 3) }, () => `${pick(QUERY)}=${rnd() < 0.5 ? encodeURIComponent(junk()) : junk()}`).join("&");
    const method = pick(["GET", "GET", "POST", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"]);
    // Mostly credentialed, so that most requests get past the guard to the handlers behind it.
    const headers: Record<string, string> = { Host: rnd() < 0.85 ? `127.0.0.1:${s.port}` : pick([`localhost:${s.port}`, "evil.example", `127.0.0.1:${s.port}.evil.example`, `127.0.0.1:${s.port + 1}`]) };
    if (rnd() < 0.9) headers.Cookie = rnd() < 0.9 ? s.cookie : pick([`${s.cookie}x`, "li_studio_1=" + s.token, `${s.cookie}; ${s.cookie}x`]);
    if (rnd() < 0.8) headers.Origin = rnd() < 0.8 ? s.origin : pick(["null", "http://evil.example", `${s.origin}.evil.example`]);
    if (rnd() < 0.8) headers["X-Li-Key"] = rnd() < 0.8 ? s.key : pick([s.key.slice(1), "", s.key + s.key]);
    if (rnd() < 0.8) headers["Content-Type"] = pick(["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"]);
    const path = (route + (query ? `?${query}` : "")).replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
    const body = method === "GET" || method === "HEAD" ? undefined : bodies();
    const r = await request(s.port, path, { method, headers, body }).catch((err) => {
      throw new Error(`request ${i} (seed ${SEED}): ${method} ${path.slice(0, 200)} ${JSON.stringify(headers)} body ${String(body).slice(0, 100)}: ${err.message}; studio exit ${s.child.exitCode} ${s.child.signalCode} ${s.stderr().slice(-1500)}`);
    });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const ok = (r.status >= 200 && r.status < 300) || (r.status >= 300 && r.status < 400 && method === "GET") || (r.status >= 400 && r.status < 500);
    if (!ok || (r.status >= 400 && method !== "HEAD" && r.status !== 431 && typeof r.json?.error?.message !== "string"))
      throw new Error(`request ${i} (seed ${SEED}): ${method} ${path.slice(0, 200)} -> ${r.status} ${r.body.slice(0, 300)}`);
  }
  console.log(`studio-fuzz statuses: ${[...statuses].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}×${v}`).join(" ")}`);
  expect(statuses.get(200)).toBeGreaterThan(0);
  const after = await apiGet(s, `/api/runs/${hang.id}`);
  expect([after.run.status, after.events.length]).toEqual(["running", events]);
}, 300_000);
